"""Forgetting an end user leaves none of their words behind: not in the audit log, not in an
export, and on SQLite not in the database file's free pages or its write-ahead log.

A canary word is written everywhere an agent puts an end user's words, the end user is
forgotten, and then every place is searched for the word (case-insensitively: the full-text
index keeps words lower-cased).
"""

import json
import subprocess
import sys
from io import StringIO
from pathlib import Path

from django.core.management import call_command
from django.db import connection

from apps.audit.models import AuditEvent
from tests.conftest import make_actor

CANARY = "Quetzalcanary7731"
TAIL = CANARY[-10:].lower().encode()  # what survives a full-text index's prefix compression


def _tell_everything(alice, resource_id: str) -> None:
    """Write the canary in each place an agent keeps an end user's words."""
    said = f"My code word is {CANARY}"
    thread = alice.new_thread(resource_id=resource_id, title=said)
    run = alice.post(f"/api/v1/threads/{thread['id']}/runs", {}).json()
    alice.append(thread["id"], {"role": "user", "content": said, "run_id": run["id"]})
    alice.put(f"/api/v1/resources/{resource_id}/profile", {"version": 0, "content": said})
    alice.put(f"/api/v1/threads/{thread['id']}/session-memory", {"version": 0, "objective": said})
    artifact = {"name": f"{CANARY}.txt", "kind": "text", "content": said}
    assert alice.post(f"/api/v1/runs/{run['id']}/artifacts", artifact).status_code == 201
    entry = alice.post("/api/v1/episodic", {"content": said, "resource_id": resource_id}).json()
    alice.patch(f"/api/v1/episodic/{entry['id']}", {"content": f"{said}, twice", "version": 1})
    checkpoint = alice.post(f"/api/v1/runs/{run['id']}/checkpoints", {"state": {"w": said}})
    alice.post(f"/api/v1/checkpoints/{checkpoint.json()['id']}/resume", {"input": said})
    alice.post(f"/api/v1/threads/{thread['id']}/context", {"query": CANARY})
    # Deleted before the end user is forgotten: its audit rows keep its words until then.
    gone = alice.post("/api/v1/episodic", {"content": f"{said} once", "resource_id": resource_id})
    assert alice.delete(f"/api/v1/episodic/{gone.json()['id']}").status_code == 204


def _occurrences(data: bytes) -> int:
    return data.lower().count(TAIL)


def _read_elsewhere(path: Path) -> bytes:
    """Return the file's bytes (none if it is missing), read by another process.

    Closing a file drops every POSIX lock this process holds on it, the SQLite connections'
    included (https://sqlite.org/howtocorrupt.html, 2.2). A connection left open here (one
    Django closed after "database is locked" stays open in SQLite until the garbage collector
    frees the cursor the error's traceback holds) would look gone to other processes: the next
    worker to close its last connection would delete the -wal and -shm files under it, and
    every later connection of this process would fail with "disk I/O error".
    """
    read = "import pathlib, sys; p = pathlib.Path(sys.argv[1]); "
    read += "sys.stdout.buffer.write(p.read_bytes() if p.exists() else b'')"
    return subprocess.run(
        [sys.executable, "-c", read, str(path)], capture_output=True, check=True
    ).stdout


def test_it_leaves_no_word_of_a_forgotten_end_user_anywhere(transactional_db, tmp_path):
    alice = make_actor("acme", "alice")
    _tell_everything(alice, "cust-1")
    kept = ("at", "actor", "action", "object_type", "object_id")
    audited = list(AuditEvent.objects.order_by("id").values_list(*kept))
    assert any(
        CANARY in json.dumps([e.summary, e.before, e.after]) for e in AuditEvent.objects.all()
    )

    response = alice.delete("/api/v1/resources/cust-1")

    assert response.status_code == 200, response.content
    events = AuditEvent.objects.exclude(action="resource.forget").order_by("id")
    assert list(events.values_list(*kept)) == audited  # who did what to which object, and when
    left = [
        e.action
        for e in events
        if _occurrences(json.dumps([e.summary, e.before, e.after]).encode())
    ]
    assert left == []
    export = tmp_path / "acme.jsonl"
    call_command("export_project", "acme", str(export), stdout=StringIO())
    assert _occurrences(export.read_bytes()) == 0
    if connection.vendor == "sqlite":
        database = Path(connection.settings_dict["NAME"])
        for path in (database, database.with_name(database.name + "-wal")):
            data = _read_elsewhere(path)
            assert _occurrences(data) == 0, f"{path.name}: {_occurrences(data)} occurrences"
