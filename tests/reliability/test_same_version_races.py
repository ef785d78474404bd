"""Twenty writers holding the same version of one versioned resource, through the real HTTP
server (a thread and a database connection each): exactly one 200, nineteen 409s naming the
current version, and the stored row is the winner's.

On PostgreSQL the writers overlap; on SQLite (the file database) they are serialised by the
write lock, which is where a version compared in Python before the write let several win.
"""

import pytest

from apps.audit.models import AuditEvent
from tests.conftest import make_actor
from tests.processes import send_at_once

WRITERS = 20


def _entry(alice) -> tuple[str, str]:
    entry = alice.post("/api/v1/episodic", {"content": "The VPN drops at 5pm"}).json()
    return f"/api/v1/episodic/{entry['id']}", "entry.edit"


def _note(alice) -> tuple[str, str]:
    note = alice.post("/api/v1/notes", {"path": "ops/vpn.md", "content": "start"}).json()
    return f"/api/v1/notes/{note['id']}", "note.update"


def _plan(alice) -> tuple[str, str]:
    thread = alice.new_thread()
    alice.put(f"/api/v1/threads/{thread['id']}/plan", {"version": 0, "goal": "start"})
    return f"/api/v1/threads/{thread['id']}/plan", "plan.write"


def _profile(alice) -> tuple[str, str]:
    alice.put("/api/v1/resources/cust-1/profile", {"version": 0, "content": "start"})
    return "/api/v1/resources/cust-1/profile", "profile.write"


def _session_memory(alice) -> tuple[str, str]:
    thread = alice.new_thread()
    path = f"/api/v1/threads/{thread['id']}/session-memory"
    alice.put(path, {"version": 0, "objective": "start"})
    return path, "session_memory.write"


# (what, a setup leaving it at version 1 that returns its path, the write method, a field)
RESOURCES = [
    ("episodic-entry", _entry, "PATCH", "content"),
    ("note", _note, "PATCH", "content"),
    ("plan", _plan, "PUT", "goal"),
    ("profile", _profile, "PUT", "content"),
    ("session-memory", _session_memory, "PUT", "objective"),
]


@pytest.mark.parametrize(
    ("create", "method", "field"),
    [row[1:] for row in RESOURCES],
    ids=[row[0] for row in RESOURCES],
)
def test_it_lets_exactly_one_of_twenty_same_version_writers_win(
    live_server, transactional_db, create, method, field
):
    alice = make_actor("acme", "alice")
    path, _ = create(alice)
    bodies = [{"version": 1, field: f"The VPN drops at {n + 6}pm"} for n in range(WRITERS)]

    responses = send_at_once(live_server.url, alice.key, [(method, path, b) for b in bodies])

    statuses = sorted(r.status_code for r in responses)
    assert statuses == [200] + [409] * (WRITERS - 1), [r.text for r in responses]
    for response in responses:
        if response.status_code == 409:
            error = response.json()["error"]
            assert (error["code"], error["details"]) == ("stale_version", {"current_version": 2})
    [winner] = [r.json() for r in responses if r.status_code == 200]
    stored = alice.get(path).json()
    assert stored["version"] == 2 and stored[field] == winner[field]


def test_it_audits_one_edit_of_an_entry_when_twenty_race(live_server, transactional_db):
    alice = make_actor("acme", "alice")
    path, action = _entry(alice)
    bodies = [{"version": 1, "content": f"The VPN drops at {n + 6}pm"} for n in range(WRITERS)]

    send_at_once(live_server.url, alice.key, [("PATCH", path, body) for body in bodies])

    assert AuditEvent.objects.filter(action=action).count() == 1
