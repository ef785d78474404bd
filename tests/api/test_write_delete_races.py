"""A write whose thread, run, end user, message, entry or document is deleted by another
request while it runs: a 404 naming the object of its path, or a 409 naming the field of its
body, never a 500 nor a stale version; nothing is stored.

Each race is played out in order on one connection (tests/races.py): the other request's
delete lands right after the request under test read the row it names.
"""

import pytest

from apps.audit.models import AuditEvent
from apps.episodic.models import MemoryEntry
from apps.knowledge.models import Document
from apps.notes.models import Note
from apps.profiles.models import SessionMemory, UserProfile
from apps.runstate.models import Artifact, Plan, RunSnapshot
from apps.tenancy.models import Resource
from apps.threads.models import Message, Run, Thread
from tests.races import after_statement, deleted_elsewhere

pytestmark = pytest.mark.django_db(transaction=True)

DELETED = "it was deleted while this request ran; nothing was stored."


def _racing(rows, fragment: str, nth: int = 1):
    """While the block runs: delete rows elsewhere right after the nth read holding fragment."""
    return after_statement(fragment, lambda: deleted_elsewhere(rows), nth)


def test_a_thread_renamed_while_it_is_deleted_is_not_found(alice):
    thread_id = alice.new_thread(title="old")["id"]

    with _racing(Thread.objects.filter(pk=thread_id), 'FROM "threads_thread"'):
        response = alice.patch(f"/api/v1/threads/{thread_id}", {"title": "new"})

    assert response.status_code == 404, response.content
    assert response.json()["error"]["message"] == f"No such thread: {DELETED}"


# The session memory's thread is read twice, by the view and by the service: the delete lands
# after the last read, as late as a concurrent one can.
@pytest.mark.parametrize(
    ("path", "body", "stored", "reads"),
    [
        ("plan", {"version": 0, "goal": "ship"}, Plan, 1),
        ("session-memory", {"version": 0, "objective": "ship"}, SessionMemory, 2),
    ],
)
def test_a_versioned_write_whose_thread_is_deleted_is_not_found_not_stale(
    alice, path, body, stored, reads
):
    thread_id = alice.new_thread()["id"]

    with _racing(Thread.objects.filter(pk=thread_id), 'FROM "threads_thread"', reads):
        response = alice.put(f"/api/v1/threads/{thread_id}/{path}", body)

    assert response.status_code == 404, response.content
    assert response.json()["error"]["message"] == f"No such thread: {DELETED}"
    assert not stored.objects.exists()


def test_a_run_snapshot_whose_thread_is_deleted_is_not_found(alice):
    thread_id = alice.new_thread()["id"]
    run_id = alice.post(f"/api/v1/threads/{thread_id}/runs", {}).json()["id"]

    with _racing(Thread.objects.filter(pk=thread_id), 'FROM "threads_run"'):
        response = alice.put(f"/api/v1/runs/{run_id}/snapshot", {"tree": {"a": 1}})

    assert response.status_code == 404, response.content
    assert response.json()["error"]["message"] == f"No such run: {DELETED}"
    assert not RunSnapshot.objects.exists()


def test_a_profile_written_while_its_end_user_is_forgotten_is_not_found(alice):
    Resource.objects.create(project=alice.agent.project, external_id="ann")

    with _racing(Resource.objects.filter(external_id="ann"), 'FROM "tenancy_resource"'):
        response = alice.put("/api/v1/resources/ann/profile", {"version": 0, "content": "Ann."})

    assert response.status_code == 404, response.content
    assert response.json()["error"]["message"] == f"No such end user: {DELETED}"
    assert not UserProfile.objects.exists()


def test_a_thread_opened_for_an_end_user_being_forgotten_names_resource_id(alice):
    Resource.objects.create(project=alice.agent.project, external_id="ann")
    body = {"resource_id": "ann", "channel": "web", "external_id": "chat-1"}

    with _racing(Resource.objects.filter(external_id="ann"), 'FROM "tenancy_resource"'):
        response = alice.post("/api/v1/threads", body)

    assert response.status_code == 409, response.content
    error = response.json()["error"]
    assert error["code"] == "deleted_meanwhile"
    assert error["message"].startswith("resource_id: the end user was deleted while this")
    assert not Thread.objects.exists()
    assert alice.post("/api/v1/threads", body).status_code == 201  # sent again: a new end user


def test_a_reindex_of_a_document_being_deleted_is_not_found(alice):
    alice.post("/api/v1/knowledge-bases", {"slug": "ops"})
    document = alice.upload("/api/v1/knowledge-bases/ops/documents", "a.md", b"# A\n\nText.")
    document_id = document.json()["id"]

    with _racing(Document.objects.filter(pk=document_id), 'FROM "knowledge_document"'):
        response = alice.post(f"/api/v1/documents/{document_id}/reindex")

    assert response.status_code == 404, response.content
    assert response.json()["error"]["message"] == f"No such document: {DELETED}"


def _entry_sources(alice) -> dict:
    """What an entry may name, each with the rows whose deletion takes it away and the read
    after which another request deletes them."""
    thread_id = alice.new_thread()["id"]
    message_id = alice.append(thread_id, {"role": "user", "content": "I like tea."})[0]["id"]
    older = alice.post("/api/v1/episodic", {"content": "Likes coffee.", "source": "api"})
    Resource.objects.create(project=alice.agent.project, external_id="ann")
    return {
        "thread_id": (thread_id, Thread.objects.filter(pk=thread_id), 'FROM "threads_thread"'),
        "message_id": (message_id, Thread.objects.filter(pk=thread_id), 'FROM "threads_message"'),
        "supersedes": (
            older.json()["id"],
            MemoryEntry.objects.filter(pk=older.json()["id"]),
            'FROM "episodic_memoryentry"',
        ),
        "resource_id": (
            "ann",
            Resource.objects.filter(external_id="ann"),
            'FROM "tenancy_resource"',
        ),
    }


@pytest.mark.parametrize("field", ["thread_id", "message_id", "supersedes", "resource_id"])
def test_an_entry_whose_source_is_deleted_meanwhile_names_the_field(alice, field):
    value, rows, read = _entry_sources(alice)[field]
    before = MemoryEntry.objects.count()
    body = {"content": "Likes tea.", "source": "api", field: value}

    with _racing(rows, read):
        response = alice.post("/api/v1/episodic", body)

    assert response.status_code == 409, response.content
    error = response.json()["error"]
    assert (error["code"], error["message"]) == ("deleted_meanwhile", f"{field}: {DELETED}")
    assert MemoryEntry.objects.filter(content="Likes tea.").count() == 0
    assert MemoryEntry.objects.count() <= before


def test_the_remember_tool_names_the_message_deleted_meanwhile(alice):
    value, rows, read = _entry_sources(alice)["message_id"]
    arguments = {"content": "Likes tea.", "source": "api", "message_id": value}

    with _racing(rows, read):
        response = alice.post("/api/v1/tools/call", {"name": "remember", "arguments": arguments})

    assert response.status_code == 409, response.content
    assert response.json()["error"]["message"] == f"message_id: {DELETED}"
    assert not Message.objects.exists()
    assert not Run.objects.exists()


def _note(alice) -> tuple[str, object]:
    note = alice.post("/api/v1/notes", {"path": "a.md", "content": "x"}).json()
    return f"/api/v1/notes/{note['id']}", Note.objects.filter(pk=note["id"])


def _artifact(alice) -> tuple[str, object]:
    thread = alice.new_thread()["id"]
    run = alice.post(f"/api/v1/threads/{thread}/runs", {}).json()["id"]
    made = alice.post(f"/api/v1/runs/{run}/artifacts", {"name": "a.md", "content": "x"}).json()
    return f"/api/v1/artifacts/{made['id']}", Artifact.objects.filter(pk=made["id"])


def _document(alice) -> tuple[str, object]:
    alice.post("/api/v1/knowledge-bases", {"slug": "ops"})
    made = alice.upload("/api/v1/knowledge-bases/ops/documents", "a.md", b"# A\n\nText.").json()
    return f"/api/v1/documents/{made['id']}", Document.objects.filter(pk=made["id"])


@pytest.mark.parametrize(
    ("make", "read", "what"),
    [
        (_note, 'FROM "notes_note"', "note"),
        (_artifact, 'FROM "runstate_artifact"', "artifact"),
        (_document, 'FROM "knowledge_document"', "document"),
    ],
)
def test_of_two_deletes_of_one_object_the_second_is_not_found(alice, make, read, what):
    path, rows = make(alice)
    audited = AuditEvent.objects.filter(action=f"{what}.delete")

    with _racing(rows, read):  # the other delete lands after this one found the object
        response = alice.delete(path)

    assert response.status_code == 404, response.content
    assert (
        response.json()["error"]["message"] == f"No such {what}: another request deleted it first."
    )
    assert not audited.exists()  # the delete that deleted nothing is not recorded
