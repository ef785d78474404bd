import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from django.db import connection, transaction
from django.utils import timezone

from apps.runstate.models import Checkpoint
from apps.threads.models import Run
from tests.conftest import make_actor


def _run(actor):
    thread = actor.new_thread()
    return actor.post(f"/api/v1/threads/{thread['id']}/runs", {}).json()


def test_it_suspends_and_resumes_a_checkpoint_once(alice):
    run = _run(alice)
    created = alice.post(
        f"/api/v1/runs/{run['id']}/checkpoints",
        {"state": {"step": 3, "pending_tool": "approve_payment"}, "reason": "needs approval"},
    )
    checkpoint_id = created.json()["id"]

    resumed = alice.post(f"/api/v1/checkpoints/{checkpoint_id}/resume", {"input": {"ok": True}})
    again = alice.post(f"/api/v1/checkpoints/{checkpoint_id}/resume", {})

    assert created.status_code == 201
    assert created.json()["status"] == "suspended"
    assert resumed.status_code == 200
    assert resumed.json()["state"] == {"step": 3, "pending_tool": "approve_payment"}
    assert resumed.json()["resume_input"] == {"ok": True}
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "already_resumed"
    listed = alice.get(f"/api/v1/runs/{run['id']}/checkpoints").json()["results"]
    assert [c["status"] for c in listed] == ["resumed"]


def test_the_run_reads_suspended_until_its_last_checkpoint_is_resumed(alice):
    run = _run(alice)
    url = f"/api/v1/runs/{run['id']}"

    first = alice.post(f"{url}/checkpoints", {"state": {"tool": 1}}).json()
    second = alice.post(f"{url}/checkpoints", {"state": {"tool": 2}}).json()  # still waiting
    waiting = alice.get(url).json()["status"]
    alice.post(f"/api/v1/checkpoints/{first['id']}/resume", {})
    after_one = alice.get(url).json()["status"]
    alice.post(f"/api/v1/checkpoints/{second['id']}/resume", {})
    after_both = alice.get(url).json()["status"]

    assert (run["status"], waiting, after_one, after_both) == (
        "running",
        "suspended",
        "suspended",
        "running",
    )


def test_a_suspended_run_can_be_finished_and_its_checkpoint_then_leaves_it_finished(alice):
    run = _run(alice)
    checkpoint = alice.post(f"/api/v1/runs/{run['id']}/checkpoints", {"state": {}}).json()

    finished = alice.post(f"/api/v1/runs/{run['id']}/finish", {"status": "cancelled"})
    resumed = alice.post(f"/api/v1/checkpoints/{checkpoint['id']}/resume", {})

    assert finished.status_code == 200, finished.content
    assert finished.json()["status"] == "cancelled"
    assert resumed.status_code == 200
    assert alice.get(f"/api/v1/runs/{run['id']}").json()["status"] == "cancelled"


@pytest.mark.parametrize("status", ["running", "suspended"])
def test_a_run_cannot_be_finished_as_open(alice, status):
    run = _run(alice)

    response = alice.post(f"/api/v1/runs/{run['id']}/finish", {"status": status})

    assert response.status_code == 400
    assert response.json()["error"]["message"].startswith(f'status: "{status}" is not a valid')


def test_concurrent_resumes_let_exactly_one_win(live_server, transactional_db):
    alice = make_actor("acme", "alice")
    run = _run(alice)
    checkpoint = alice.post(f"/api/v1/runs/{run['id']}/checkpoints", {"state": {"s": 1}}).json()
    url = f"{live_server.url}/api/v1/checkpoints/{checkpoint['id']}/resume"
    start = threading.Barrier(5)

    def resume(number):
        start.wait()
        headers = {"Authorization": f"Bearer {alice.key}"}
        return requests.post(url, json={"input": number}, headers=headers, timeout=30)

    with ThreadPoolExecutor(5) as pool:
        statuses = sorted(r.status_code for r in pool.map(resume, range(5)))

    assert statuses == [200, 409, 409, 409, 409]


def test_a_finished_run_cannot_be_suspended_at_a_checkpoint(alice):
    run = _run(alice)
    alice.post(f"/api/v1/runs/{run['id']}/finish", {"status": "succeeded"})

    response = alice.post(f"/api/v1/runs/{run['id']}/checkpoints", {"state": {"s": 1}})

    assert response.status_code == 409
    assert response.json()["error"]["details"] == {"status": "succeeded"}
    assert "only a running or suspended run" in response.json()["error"]["message"]
    assert Checkpoint.objects.count() == 0


def test_a_checkpoint_sent_while_the_run_is_being_finished_waits_and_is_a_409(
    live_server, transactional_db
):
    # SQLite runs one write transaction at a time (IMMEDIATE), so only PostgreSQL can
    # interleave the two: the finish holds the run's row, the checkpoint must wait for it.
    if connection.vendor != "postgresql":
        pytest.skip("SQLite's write transactions are serial")
    alice = make_actor("acme", "alice")
    run = _run(alice)
    url = f"{live_server.url}/api/v1/runs/{run['id']}/checkpoints"
    headers = {"Authorization": f"Bearer {alice.key}"}
    pool = ThreadPoolExecutor(1)
    with transaction.atomic():
        Run.objects.select_for_update().get(id=run["id"])
        Run.objects.filter(id=run["id"]).update(status="failed", finished_at=timezone.now())
        pending = pool.submit(requests.post, url, json={"state": {}}, headers=headers, timeout=30)
        _wait_until_a_request_waits_for_a_lock()
    response = pending.result(timeout=30)
    pool.shutdown()

    assert response.status_code == 409
    assert response.json()["error"]["details"] == {"status": "failed"}
    assert Checkpoint.objects.count() == 0


def _wait_until_a_request_waits_for_a_lock() -> None:
    deadline = time.monotonic() + 20
    with connection.cursor() as cursor:
        while time.monotonic() < deadline:
            cursor.execute("SELECT pg_stat_clear_snapshot()")
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
            )
            if cursor.fetchone()[0]:
                return
    raise AssertionError("the checkpoint request never waited for the run's row")


def test_it_requires_a_state_object(alice):
    run = _run(alice)

    response = alice.post(f"/api/v1/runs/{run['id']}/checkpoints", {"state": [1, 2]})

    assert response.status_code == 400
    assert response.json()["error"]["message"].startswith("state:")


def test_it_keeps_the_latest_run_snapshot(alice):
    run = _run(alice)
    url = f"/api/v1/runs/{run['id']}/snapshot"

    missing = alice.get(url)
    first = alice.put(url, {"tree": {"agent": "orchestrator", "children": []}})
    second = alice.put(url, {"tree": {"agent": "orchestrator", "children": [{"agent": "builder"}]}})

    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "no_snapshot"
    assert first.json()["version"] == 1
    assert second.json()["version"] == 2
    assert alice.get(url).json()["tree"]["children"] == [{"agent": "builder"}]
