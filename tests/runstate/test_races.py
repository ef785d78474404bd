"""Concurrent writes of run state through the real HTTP server: numbered, one winner, no 500.

On PostgreSQL the requests overlap, each server thread on its own connection; on SQLite the
writers are serialised by the database lock, and the answers must be the same.
"""

from apps.runstate.models import IterationLog, Plan, RunSnapshot
from tests.conftest import make_actor
from tests.processes import send_at_once

CLIENTS = 8


def _race(live_server, key: str, method: str, path: str, bodies: list[dict]) -> list:
    return send_at_once(live_server.url, key, [(method, path, body) for body in bodies])


def test_concurrent_attempts_at_one_task_are_numbered_without_gaps(live_server, transactional_db):
    alice = make_actor("acme", "alice")
    thread = alice.new_thread()
    bodies = [{"task": "build", "outcome": "failed", "summary": str(n)} for n in range(CLIENTS)]

    responses = _race(
        live_server, alice.key, "POST", f"/api/v1/threads/{thread['id']}/iterations", bodies
    )

    assert [r.status_code for r in responses] == [201] * CLIENTS, [r.text for r in responses]
    assert sorted(r.json()["attempt"] for r in responses) == list(range(1, CLIENTS + 1))
    assert IterationLog.objects.filter(thread_id=thread["id"]).count() == CLIENTS


def test_concurrent_first_plans_let_one_win_and_answer_409(live_server, transactional_db):
    alice = make_actor("acme", "alice")
    thread = alice.new_thread()
    bodies = [{"version": 0, "goal": f"goal {n}"} for n in range(CLIENTS)]

    responses = _race(live_server, alice.key, "PUT", f"/api/v1/threads/{thread['id']}/plan", bodies)

    statuses = sorted(r.status_code for r in responses)
    assert statuses == [200] + [409] * (CLIENTS - 1), [r.text for r in responses]
    for response in responses:
        if response.status_code == 409:
            assert response.json()["error"]["details"]["current_version"] == 1
    assert Plan.objects.get(thread_id=thread["id"]).version == 1


def test_concurrent_first_snapshots_of_a_run_store_one(live_server, transactional_db):
    alice = make_actor("acme", "alice")
    thread = alice.new_thread()
    run = alice.post(f"/api/v1/threads/{thread['id']}/runs", {}).json()
    bodies = [{"tree": {"agent": f"a{n}"}} for n in range(CLIENTS)]

    responses = _race(live_server, alice.key, "PUT", f"/api/v1/runs/{run['id']}/snapshot", bodies)

    assert [r.status_code for r in responses] == [200] * CLIENTS, [r.text for r in responses]
    assert sorted(r.json()["version"] for r in responses) == list(range(1, CLIENTS + 1))
    assert RunSnapshot.objects.filter(run_id=run["id"]).count() == 1
