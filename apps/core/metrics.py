"""Prometheus metrics (prometheus-client) and the GET /metrics endpoint that serves them.

Counters and histograms live in each process. Under gunicorn with several workers, set
PROMETHEUS_MULTIPROC_DIR to an empty directory shared by the workers (the Docker image does), so
that a scrape of any worker reports all of them. The job queue's depth is read from the database
at each scrape, so it is the same whichever process answers.
"""

import hmac
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from django.conf import settings
from django.http import Http404, HttpResponse
from django.views.decorators.http import require_GET
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    multiprocess,
)

# Seconds, from a cached read to a slow model call or a large PDF.
_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300)

HTTP_REQUESTS = Counter(
    "memory_console_http_requests",
    "HTTP requests answered, by route pattern, method and status.",
    ["route", "method", "status"],
)
HTTP_SECONDS = Histogram(
    "memory_console_http_request_duration_seconds",
    "Time to answer an HTTP request, by route pattern and method.",
    ["route", "method"],
    buckets=_BUCKETS,
)
SEARCH_SECONDS = Histogram(
    "memory_console_search_duration_seconds",
    "Time to answer a search request (POST /api/v1/search).",
    buckets=_BUCKETS,
)
INGEST_SECONDS = Histogram(
    "memory_console_ingest_duration_seconds",
    "Time to take in content: a batch of messages appended, a document ingested.",
    ["what"],
    buckets=_BUCKETS,
)
JOB_SECONDS = Histogram(
    "memory_console_job_duration_seconds",
    "Time a background job's attempt ran, by kind.",
    ["kind"],
    buckets=_BUCKETS,
)
LLM_CALLS = Counter(
    "memory_console_llm_calls", "Chat model calls, by task and model.", ["task", "model"]
)
LLM_FAILURES = Counter(
    "memory_console_llm_failures",
    "Chat model calls that failed (no answer, or not the output asked for), by task and model.",
    ["task", "model"],
)

# What the running code is doing, for the LLM metrics' task label: a job's kind inside a job,
# "request" otherwise. Set by the job runner; read where the model is called.
current_task: ContextVar[str] = ContextVar("current_task", default="request")

# Routes whose latency is also reported as search or ingest.
_SEARCH_ROUTE = "api/v1/search"
_INGEST_ROUTES = {"api/v1/threads/<id:thread_id>/messages": "messages"}
# Job kinds whose run time is also reported as ingest.
INGEST_JOB_KINDS = {"knowledge.ingest": "document"}


@contextmanager
def job_observed(kind: str) -> Iterator[None]:
    """Label LLM calls with the job's kind and time the job while the block runs."""
    token = current_task.set(kind)
    started = time.perf_counter()
    try:
        yield
    finally:
        elapsed = time.perf_counter() - started
        current_task.reset(token)
        JOB_SECONDS.labels(kind).observe(elapsed)
        if kind in INGEST_JOB_KINDS:
            INGEST_SECONDS.labels(INGEST_JOB_KINDS[kind]).observe(elapsed)


TOOL_CALLS = Counter(
    "memory_console_tool_calls",
    "Agent tool calls (MCP and POST /api/v1/tools/call), by tool and outcome.",
    ["tool", "outcome"],
)


def tool_call_record(*, tool: str, outcome: str) -> None:
    """Count a tool call: outcome is ok, refused (bad arguments, unknown tool) or error."""
    TOOL_CALLS.labels(tool, outcome).inc()


def llm_call_record(*, model: str, failed: bool) -> None:
    task = current_task.get()
    LLM_CALLS.labels(task, model).inc()
    if failed:
        LLM_FAILURES.labels(task, model).inc()


def request_record(*, route: str, method: str, status: int, seconds: float) -> None:
    HTTP_REQUESTS.labels(route, method, str(status)).inc()
    HTTP_SECONDS.labels(route, method).observe(seconds)
    if route == _SEARCH_ROUTE and method == "POST":
        SEARCH_SECONDS.observe(seconds)
    elif route in _INGEST_ROUTES and method == "POST" and status < 300:
        INGEST_SECONDS.labels(_INGEST_ROUTES[route]).observe(seconds)


# Collectors read at each scrape (a higher app's, such as the job queue's depth).
_SCRAPE_COLLECTORS: list = []


def collector_register(collector) -> None:
    """Add a collector whose collect() is called at each scrape, in every process alike."""
    _SCRAPE_COLLECTORS.append(collector)


def _registry() -> CollectorRegistry:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    else:
        registry = CollectorRegistry()
        registry.register(_ProcessMetrics())
    for collector in _SCRAPE_COLLECTORS:
        registry.register(collector)
    return registry


class _ProcessMetrics:
    """This process's own metrics, from prometheus-client's global registry."""

    def collect(self):
        yield from REGISTRY.collect()


def _authorised(header: str, token: str) -> bool:
    scheme, _, given = header.partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.strip(), token)


_UNAUTHORISED = "Send the metrics token as 'Authorization: Bearer <METRICS_TOKEN>'.\n"


@require_GET
def metrics(request):
    """Serve the metrics to a holder of the METRICS_TOKEN bearer token; 404 when it is unset."""
    token = settings.METRICS_TOKEN
    if not token:
        raise Http404("Metrics are off: set METRICS_TOKEN.")
    if not _authorised(request.headers.get("Authorization", ""), token):
        response = HttpResponse(_UNAUTHORISED, status=401, content_type="text/plain; charset=utf-8")
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    return HttpResponse(generate_latest(_registry()), content_type=CONTENT_TYPE_LATEST)


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format, *args):
        pass  # a scrape every few seconds is not worth a log line


def metrics_server_start(*, port: int, token: str, host: str = "0.0.0.0") -> WSGIServer:
    """Serve /metrics of a process that has no web server (a Celery worker) on a port of its own.

    Same token, same answers as the web's /metrics. With PROMETHEUS_MULTIPROC_DIR set, it reports
    the worker's child processes, where the jobs run.
    """

    def app(environ, start_response):
        if not _authorised(environ.get("HTTP_AUTHORIZATION", ""), token):
            start_response("401 Unauthorized", [("WWW-Authenticate", 'Bearer realm="metrics"')])
            return [_UNAUTHORISED.encode()]
        start_response("200 OK", [("Content-Type", CONTENT_TYPE_LATEST)])
        return [generate_latest(_registry())]

    server = make_server(host, port, app, handler_class=_QuietHandler)
    threading.Thread(target=server.serve_forever, name="metrics", daemon=True).start()
    return server
