"""Concurrent PUTs holding the same version, through the real HTTP server: exactly one wins."""

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from apps.audit.models import AuditEvent
from tests.conftest import make_actor

WRITERS = 5


def _race(url: str, key: str, bodies: list[dict]) -> list[requests.Response]:
    start = threading.Barrier(len(bodies))

    def put(body):
        start.wait()
        headers = {"Authorization": f"Bearer {key}"}
        return requests.put(url, json=body, headers=headers, timeout=60)

    with ThreadPoolExecutor(len(bodies)) as pool:
        return list(pool.map(put, bodies))


@pytest.mark.parametrize("version", [0, 1], ids=["first-write", "update"])
def test_concurrent_profile_writes_with_one_version_let_exactly_one_win(
    live_server, transactional_db, version
):
    alice = make_actor("acme", "alice")
    url = f"{live_server.url}/api/v1/resources/cust-1/profile"
    if version:
        alice.put("/api/v1/resources/cust-1/profile", {"version": 0, "content": "start"})
    bodies = [{"version": version, "content": f"writer {n}"} for n in range(WRITERS)]

    answers = _race(url, alice.key, bodies)

    assert sorted(r.status_code for r in answers) == [200] + [409] * (WRITERS - 1)
    winner = next(r.json() for r in answers if r.status_code == 200)
    assert all(
        r.json()["error"]["details"] == {"current_version": version + 1}
        for r in answers
        if r.status_code == 409
    )
    assert alice.get("/api/v1/resources/cust-1/profile").json() == winner
    assert AuditEvent.objects.filter(action="profile.write").count() == version + 1


@pytest.mark.parametrize("version", [0, 1], ids=["first-write", "update"])
def test_concurrent_session_memory_writes_with_one_version_let_exactly_one_win(
    live_server, transactional_db, version
):
    alice = make_actor("acme", "alice")
    thread = alice.new_thread()
    path = f"/api/v1/threads/{thread['id']}/session-memory"
    if version:
        alice.put(path, {"version": 0, "objective": "start"})
    bodies = [{"version": version, "objective": f"writer {n}"} for n in range(WRITERS)]

    answers = _race(f"{live_server.url}{path}", alice.key, bodies)

    assert sorted(r.status_code for r in answers) == [200] + [409] * (WRITERS - 1)
    winner = next(r.json() for r in answers if r.status_code == 200)
    assert alice.get(path).json() == winner
    assert AuditEvent.objects.filter(action="session_memory.write").count() == version + 1
