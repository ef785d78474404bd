"""Concurrent note writes through the real HTTP server: one winner, the rest 409, never a 500."""

from apps.notes.models import Note, NoteLink
from apps.search.models import SearchItem
from tests.conftest import make_actor
from tests.processes import send_at_once

CLIENTS = 6


def _race(live_server, key: str, method: str, path: str, bodies: list[dict]) -> list:
    return send_at_once(live_server.url, key, [(method, path, body) for body in bodies])


def test_concurrent_creates_at_one_path_store_one_note(live_server, transactional_db):
    alice = make_actor("acme", "alice")
    bodies = [{"path": "ops/deploy.md", "content": f"[[v{n}]]"} for n in range(CLIENTS)]

    responses = _race(live_server, alice.key, "POST", "/api/v1/notes", bodies)

    statuses = sorted(r.status_code for r in responses)
    assert statuses == [201] + [409] * (CLIENTS - 1), [r.text for r in responses]
    note = Note.objects.get()
    assert all(
        r.json()["error"]["details"] == {"note_id": str(note.id)}
        for r in responses
        if r.status_code == 409
    )
    assert NoteLink.objects.count() == 1 and SearchItem.objects.filter(note=note).count() == 1


def test_concurrent_patches_of_one_version_let_one_win(live_server, transactional_db):
    alice = make_actor("acme", "alice")
    note = alice.post("/api/v1/notes", {"path": "a.md", "content": "zero"}).json()
    bodies = [{"version": 1, "content": f"writer {n} [[l{n}]]"} for n in range(CLIENTS)]

    responses = _race(live_server, alice.key, "PATCH", f"/api/v1/notes/{note['id']}", bodies)

    statuses = sorted(r.status_code for r in responses)
    assert statuses == [200] + [409] * (CLIENTS - 1), [r.text for r in responses]
    [winner] = [r.json() for r in responses if r.status_code == 200]
    stored = Note.objects.get()
    assert (stored.version, stored.content) == (2, winner["content"])
    assert list(NoteLink.objects.values_list("target_path", flat=True)) == [
        winner["links"][0]["path"]
    ]


def test_concurrent_note_write_calls_without_a_version_each_replace_the_note(
    live_server, transactional_db
):
    alice = make_actor("acme", "alice")
    bodies = [
        {"name": "note_write", "arguments": {"path": "w/x.md", "content": f"writer {n}"}}
        for n in range(CLIENTS)
    ]

    responses = _race(live_server, alice.key, "POST", "/api/v1/tools/call", bodies)

    # Leaving version out overwrites whatever is there, one written a moment ago included: as
    # one after the other, every call is stored, each as the next version.
    assert [r.status_code for r in responses] == [200] * CLIENTS, [r.text for r in responses]
    versions = sorted(r.json()["result"]["version"] for r in responses)
    assert versions == list(range(1, CLIENTS + 1))
    stored = Note.objects.get()
    assert stored.version == CLIENTS
