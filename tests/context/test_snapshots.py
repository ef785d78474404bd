"""Every context is stored as a snapshot: re-rendered on demand, listed, compared."""

import threading

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from apps.context.models import ContextSnapshot
from apps.context.snapshots import manifest_items
from apps.episodic.models import MemoryEntry
from tests.context.conftest import block, context, talk


def _read(actor, context_id):
    return actor.get(f"/api/v1/contexts/{context_id}")


def test_a_stored_context_re_renders_exactly_as_it_was_given(alice, remember, configure):
    remember(alice, "Ann's heating fails on cold mornings")
    configure(alice, context_strategy="none", semantic_recall_enabled=True, recent_window=2)
    thread = alice.new_thread(resource_id="ann")
    talk(alice, thread["id"], "heating trouble again", "since when?", "cold mornings", "ok")
    given = context(alice, thread["id"], query="heating cold")

    response = _read(alice, given["context_id"])

    assert response.status_code == 200
    assert response.json() == given


def test_items_changed_or_deleted_since_are_flagged(alice, remember):
    kept = remember(alice, "heating note kept")
    edited = remember(alice, "heating note edited")
    gone = remember(alice, "heating note deleted")
    thread = alice.new_thread(resource_id="ann")
    talk(alice, thread["id"], "heating note?")
    given = context(alice, thread["id"])
    MemoryEntry.objects.filter(pk=edited["id"]).update(content="heating note rewritten")
    assert alice.delete(f"/api/v1/episodic/{gone['id']}").status_code in (200, 204)

    replay = _read(alice, given["context_id"]).json()

    flags = {item["id"]: item for item in block(replay, "memory")["items"]}
    assert flags[kept["id"]].keys() == {"type", "id", "seq", "score"}
    assert flags[edited["id"]]["changed"] is True
    assert flags[gone["id"]]["deleted"] is True
    text = block(replay, "memory")["text"]
    assert "heating note rewritten" in text and "heating note deleted" not in text


def test_the_thread_lists_its_contexts_newest_first(alice):
    thread = alice.new_thread()
    talk(alice, thread["id"], "hello")
    first = context(alice, thread["id"])
    second = context(alice, thread["id"], max_tokens=1000)

    listed = alice.get(f"/api/v1/threads/{thread['id']}/contexts").json()["results"]

    assert [c["id"] for c in listed] == [second["context_id"], first["context_id"]]
    assert listed[0]["max_tokens"] == 1000 and listed[0]["tokens"] == second["tokens"]


def test_a_diff_says_which_items_entered_left_or_changed(alice, remember, configure):
    configure(alice, context_strategy="none", recent_window=2)
    thread = alice.new_thread(resource_id="ann")
    talk(alice, thread["id"], "one", "two")
    before = context(alice, thread["id"], query="boiler")
    entry = remember(alice, "the boiler was serviced")
    talk(alice, thread["id"], "three")
    after = context(alice, thread["id"], query="boiler")

    diff = alice.get(f"/api/v1/contexts/{before['context_id']}/diff/{after['context_id']}")

    body = diff.json()
    assert diff.status_code == 200
    assert body["from"] == before["context_id"] and body["to"] == after["context_id"]
    entered = [(i["block"], i["type"], i["seq"]) for i in body["entered"]]
    assert entered == [("memory", "entry", None), ("recent", "message", 3)]
    assert body["entered"][0]["id"] == entry["id"]
    assert [(i["block"], i["seq"]) for i in body["left"]] == [("recent", 1)]
    assert body["changed"] == []


def test_the_manifest_lists_each_blocks_items_column_by_column(alice, remember):
    remember(alice, "Ann's boiler was serviced")
    thread = alice.new_thread(resource_id="ann")
    talk(alice, thread["id"], "boiler?", "serviced")
    given = context(alice, thread["id"], query="boiler")

    stored = ContextSnapshot.objects.get(pk=given["context_id"]).manifest["blocks"]

    memory = next(b for b in stored if b["name"] == "memory")
    entry_id = block(given, "memory")["items"][0]["id"]
    assert (memory["type"], memory["id"]) == ("entry", [entry_id])
    assert len(memory["hash"]) == len(memory["seq"]) == len(memory["score"]) == 1
    for stored_block, answered in zip(stored, given["blocks"], strict=True):
        items = [
            {k: i[k] for k in ("type", "id", "seq", "score")} for i in manifest_items(stored_block)
        ]
        assert items == answered["items"]


def test_a_snapshot_stored_with_one_dict_per_item_still_replays_and_diffs(
    alice, remember, configure
):
    configure(alice, context_strategy="none", recent_window=2, semantic_recall_enabled=False)
    remember(alice, "Ann's boiler was serviced")
    thread = alice.new_thread(resource_id="ann")
    talk(alice, thread["id"], "boiler?", "serviced")
    given = context(alice, thread["id"], query="boiler")
    snapshot = ContextSnapshot.objects.get(pk=given["context_id"])
    snapshot.manifest["blocks"] = [  # the layout before columns
        {"name": b["name"], "items": manifest_items(b)} for b in snapshot.manifest["blocks"]
    ]
    # Nor did such a snapshot keep where its query came from or its budget.
    del snapshot.manifest["query_source"], snapshot.manifest["budget"]
    snapshot.save()
    given["query_source"] = None
    for answered in given["blocks"]:
        answered["planned_tokens"] = answered["granted_tokens"] = None
    talk(alice, thread["id"], "and now?")
    later = context(alice, thread["id"], query="boiler")

    replay = _read(alice, given["context_id"])
    diff = alice.get(f"/api/v1/contexts/{given['context_id']}/diff/{later['context_id']}")

    assert replay.status_code == 200 and replay.json() == given
    assert [(i["block"], i["seq"]) for i in diff.json()["entered"]] == [("recent", 3)]
    assert [(i["block"], i["seq"]) for i in diff.json()["left"]] == [("recent", 1)]


def test_other_agents_snapshots_answer_404(alice, bob, carol):
    thread = alice.new_thread()
    talk(alice, thread["id"], "hello")
    given = context(alice, thread["id"])
    bobs_thread = bob.new_thread()
    bobs = context(bob, bobs_thread["id"])

    for outsider in (bob, carol):
        assert _read(outsider, given["context_id"]).status_code == 404
    assert (
        alice.get(f"/api/v1/contexts/{given['context_id']}/diff/{bobs['context_id']}").status_code
        == 404
    )


@pytest.mark.django_db(transaction=True)
def test_a_snapshot_commits_without_waiting_for_the_disk_and_nothing_else_does():
    from tests.conftest import make_actor

    alice = make_actor("acme", "alice")
    thread = alice.new_thread()
    talk(alice, thread["id"], "Where is the spare key?", "Under the blue pot.")
    with CaptureQueriesContext(connection) as seen:
        answer = context(alice, thread["id"], query="spare key")

    statements = [query["sql"] for query in seen.captured_queries]
    relaxed = [n for n, sql in enumerate(statements) if "synchronous_commit" in sql]
    inserts = [n for n, sql in enumerate(statements) if "INSERT" in sql]
    assert ContextSnapshot.objects.filter(id=answer["context_id"]).exists()
    if connection.vendor == "postgresql":
        # Set for the snapshot's own transaction, right before its insert, and only there.
        assert len(relaxed) == 1 and inserts == [relaxed[0] + 1]
        with connection.cursor() as cursor:
            cursor.execute("SHOW synchronous_commit")
            assert cursor.fetchone()[0] == "on"  # the connection's other transactions wait
    else:
        assert relaxed == []  # SQLite's WAL with synchronous NORMAL does not sync a commit


@pytest.mark.django_db(transaction=True)
def test_inside_a_transaction_already_open_a_record_stays_durable():
    from apps.core.database import record_transaction

    with transaction.atomic(), CaptureQueriesContext(connection) as seen, record_transaction():
        pass

    assert not any("synchronous_commit" in query["sql"] for query in seen.captured_queries)


@pytest.mark.django_db(transaction=True)
def test_a_thread_deleted_while_its_context_is_assembled_answers_404_and_stores_nothing():
    from tests.conftest import make_actor

    alice = make_actor("acme", "alice")
    thread = alice.new_thread()["id"]
    talk(alice, thread, "Where is the spare key?", "Under the blue pot.")
    other_request = APIClient()
    other_request.credentials(HTTP_AUTHORIZATION=f"Bearer {alice.key}")
    deleted = []

    def delete_the_thread():
        try:
            deleted.append(other_request.delete(f"/api/v1/threads/{thread}"))
        finally:
            connection.close()  # this thread's own connection

    def delete_once_the_context_is_read(execute, sql, params, many, context):
        # The snapshot's transaction opens once the context has read all it shows: SQLite's
        # opens with BEGIN, PostgreSQL's (opened by its driver) at its first statement. Another
        # request, on its own connection, deletes the thread right then.
        if not deleted and (sql.startswith("BEGIN") or connection.in_atomic_block):
            other = threading.Thread(target=delete_the_thread)
            other.start()
            other.join()
        return execute(sql, params, many, context)

    with connection.execute_wrapper(delete_once_the_context_is_read):
        response = alice.post(f"/api/v1/threads/{thread}/context", {"query": "spare key"})

    assert deleted[0].status_code == 204
    assert response.status_code == 404, response.content
    assert response.json()["error"]["message"] == (
        "The thread no longer exists: it was deleted while its context was assembled, and no "
        "context was stored."
    )
    assert not ContextSnapshot.objects.exists()
