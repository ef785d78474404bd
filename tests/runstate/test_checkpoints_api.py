import threading
from concurrent.futures import ThreadPoolExecutor

import requests

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
