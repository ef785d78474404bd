"""GET /metrics: Prometheus text behind the METRICS_TOKEN bearer token."""

import pytest
from django.test import Client
from prometheus_client.parser import text_string_to_metric_families

from apps.jobs.services import job_enqueue, job_run_pending
from apps.memconfig.services import config_update
from apps.providers.fake_openai import FakeOpenAIServer
from tests.processes import ROOT, worker_env

TOKEN = "scrape-token-for-tests"


@pytest.fixture
def scrape(settings, db):
    """Return a function that scrapes /metrics and gives {(name, labels): value}."""
    settings.METRICS_TOKEN = TOKEN

    def read() -> dict:
        response = Client().get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
        assert response.status_code == 200, response.content
        samples = {}
        for family in text_string_to_metric_families(response.content.decode()):
            for sample in family.samples:
                samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
        return samples

    return read


def _value(samples: dict, name: str, **labels) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_it_is_404_without_a_token_setting(db, settings):
    settings.METRICS_TOKEN = ""

    assert Client().get("/metrics", HTTP_AUTHORIZATION="Bearer anything").status_code == 404


@pytest.mark.parametrize("header", [None, "Bearer wrong-token", f"Basic {TOKEN}", "Bearer "])
def test_it_is_401_without_the_right_token(db, settings, header):
    settings.METRICS_TOKEN = TOKEN
    extra = {"HTTP_AUTHORIZATION": header} if header is not None else {}

    response = Client().get("/metrics", **extra)

    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_it_is_200_in_prometheus_format_with_the_right_token(db, settings):
    settings.METRICS_TOKEN = TOKEN

    response = Client().get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain; version=")
    assert b"# TYPE memory_console_http_requests_total counter" in response.content


def test_it_counts_requests_by_route_and_status_with_latencies(scrape, alice):
    before = scrape()
    thread = alice.new_thread()
    alice.get(f"/api/v1/threads/{thread['id']}")
    alice.get("/api/v1/threads/00000000-0000-0000-0000-000000000000")
    after = scrape()

    route = "api/v1/threads/<id:thread_id>"
    for status in ("200", "404"):
        labels = {"route": route, "method": "GET", "status": status}
        counted = _value(after, "memory_console_http_requests_total", **labels)
        assert counted - _value(before, "memory_console_http_requests_total", **labels) == 1
    timed = "memory_console_http_request_duration_seconds_count"
    assert (
        _value(after, timed, route=route, method="GET")
        - _value(before, timed, route=route, method="GET")
        == 2
    )


def test_it_reports_the_job_queue_by_kind_and_state(scrape):
    job_enqueue(kind="metrics.test", key="a")
    job_enqueue(kind="metrics.test", key="b")
    job_enqueue(kind="metrics.other", key="c")

    samples = scrape()

    assert _value(samples, "memory_console_jobs", kind="metrics.test", state="pending") == 2
    assert _value(samples, "memory_console_jobs", kind="metrics.other", state="pending") == 1


def test_it_times_search_and_ingest(scrape, alice):
    before = scrape()
    thread = alice.new_thread()
    alice.append(thread["id"], {"role": "user", "content": "the boiler is leaking"})
    alice.post("/api/v1/search", {"query": "boiler"})
    alice.post("/api/v1/knowledge-bases", {"slug": "ops"})
    alice.post("/api/v1/knowledge-bases/ops/documents", {"title": "t", "text": "Restart it."})
    job_run_pending()
    after = scrape()

    def grew(name, **labels):
        return _value(after, name, **labels) - _value(before, name, **labels)

    assert grew("memory_console_search_duration_seconds_count") == 1
    assert grew("memory_console_ingest_duration_seconds_count", what="messages") == 1
    assert grew("memory_console_ingest_duration_seconds_count", what="document") == 1


def test_it_counts_tool_calls_by_tool_and_outcome(scrape, alice):
    before = scrape()
    call = "/api/v1/tools/call"
    alice.post(call, {"name": "recall_memory", "arguments": {"query": "boiler"}})
    alice.post(call, {"name": "recall_memory", "arguments": {"top_k": "many"}})
    alice.post(call, {"name": "no_such_tool", "arguments": {}})
    after = scrape()

    def grew(**labels):
        name = "memory_console_tool_calls_total"
        return _value(after, name, **labels) - _value(before, name, **labels)

    assert grew(tool="recall_memory", outcome="ok") == 1
    assert grew(tool="recall_memory", outcome="refused") == 1
    assert grew(tool="unknown", outcome="refused") == 1


def test_it_counts_llm_calls_and_failures_by_task(scrape, alice, settings):
    long = [{"role": "user", "content": f"step {n} " + "word " * 200} for n in range(12)]
    config_update(
        agent=alice.agent,
        changes={
            "context_strategy": "observational",
            "observer_message_tokens": 1000,
            "recent_window": 2,
        },
        changed_by="test",
    )
    with FakeOpenAIServer() as model:
        settings.OPENAI_BASE_URL, settings.OPENAI_API_KEY = model.base_url, "sk-test"
        settings.OPENAI_MAX_RETRIES = 0
        model.fail_next(1, status=500)  # one request per call: no retries, no JSON-mode fallback
        before = scrape()
        alice.append(alice.new_thread()["id"], *long)
        job_run_pending()
        after = scrape()
        asked = len(model.bodies("/v1/chat/completions"))

    task = {"task": "observations.update", "model": alice_model(alice)}
    calls = _value(after, "memory_console_llm_calls_total", **task) - _value(
        before, "memory_console_llm_calls_total", **task
    )
    failures = _value(after, "memory_console_llm_failures_total", **task) - _value(
        before, "memory_console_llm_failures_total", **task
    )
    assert asked >= 1
    assert calls == asked
    assert failures >= 1


def alice_model(actor) -> str:
    from apps.memconfig.selectors import config_effective

    return config_effective(agent=actor.agent)["observer_model"]


def test_a_worker_serves_its_own_metrics_behind_the_token(db):
    import requests

    from apps.core.metrics import LLM_CALLS, metrics_server_start

    LLM_CALLS.labels("worker.test", "m").inc()
    server = metrics_server_start(port=0, token=TOKEN, host="127.0.0.1")
    try:
        url = f"http://127.0.0.1:{server.server_port}/metrics"
        refused = requests.get(url, headers={"Authorization": "Bearer wrong"}, timeout=10)
        served = requests.get(url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10)
    finally:
        server.shutdown()
        server.server_close()

    assert refused.status_code == 401
    assert served.status_code == 200
    assert 'memory_console_llm_calls_total{model="m",task="worker.test"}' in served.text


def test_run_worker_serves_its_jobs_metrics_on_the_worker_port(transactional_db):
    import socket
    import subprocess
    import sys
    import time

    import requests

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = worker_env(WORKER_METRICS_PORT=str(port), METRICS_TOKEN=TOKEN)
    env.pop("CELERY_BROKER_URL", None)
    worker = subprocess.Popen(
        [sys.executable, "manage.py", "run_worker", "--poll", "0.2", "--no-schedule"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        served = None
        deadline = time.monotonic() + 30
        while served is None and time.monotonic() < deadline:
            try:
                served = requests.get(
                    f"http://127.0.0.1:{port}/metrics",
                    headers={"Authorization": f"Bearer {TOKEN}"},
                    timeout=2,
                )
            except requests.ConnectionError:
                time.sleep(0.2)
    finally:
        worker.terminate()
        worker.wait(timeout=30)

    assert served is not None and served.status_code == 200
    assert "memory_console_job_duration_seconds" in served.text
