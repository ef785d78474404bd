"""Notes as a search scope: `"scopes": ["notes"]` finds what the caller may see, with vectors
when an embedder serves the project, and note_search gives the same to a tool layer."""

from apps.notes.selectors import note_search
from apps.search.models import ItemEmbedding, ItemKind
from tests.notes.conftest import write


def _search(actor, query, **body):
    response = actor.post("/api/v1/search", {"query": query, "scopes": ["notes"], **body})
    assert response.status_code == 200, response.content
    return response.json()["results"]


def test_it_finds_the_callers_notes_and_the_projects_shared_ones(alice, bob, carol):
    mine = write(alice, "ops/deploy.md", "Deploy the billing service with the blue pipeline.")
    shared = write(bob, "team/billing.md", "Billing runbook for the whole team.", scope="shared")
    write(bob, "bob/billing.md", "Bob's private billing thoughts.")
    write(carol, "billing.md", "Globex billing.", scope="shared")
    alice.new_thread()  # a thread and messages are no notes
    results = _search(alice, "billing")

    assert {r["id"] for r in results} == {mine["id"], shared["id"]}
    hit = next(r for r in results if r["id"] == mine["id"])
    assert hit["type"] == "note"
    assert hit["content"] == "Deploy the billing service with the blue pipeline."
    assert hit["metadata"] == {
        "path": "ops/deploy.md",
        "title": "deploy",
        "scope": "personal",
        "tags": [],
        "version": 1,
    }
    assert [r["id"] for r in _search(carol, "billing")] != []
    assert all(r["metadata"]["path"] == "billing.md" for r in _search(carol, "billing"))


def test_it_finds_a_note_by_its_title_path_and_tags(alice):
    note = write(alice, "infra/kubernetes.md", "Nothing else here.", title="Cluster", tags=["k8s"])

    for query in ("cluster", "kubernetes", "k8s"):
        assert [r["id"] for r in _search(alice, query)] == [note["id"]], query


def test_an_edit_is_found_by_its_new_words_only(alice):
    note = write(alice, "a.md", "The old password hint.")
    alice.patch(f"/api/v1/notes/{note['id']}", {"version": 1, "content": "A fresh sentence."})

    assert _search(alice, "password") == []
    assert [r["id"] for r in _search(alice, "fresh")] == [note["id"]]


def test_a_deleted_note_is_no_longer_found(alice):
    note = write(alice, "a.md", "Ephemeral words.")
    alice.delete(f"/api/v1/notes/{note['id']}")

    assert _search(alice, "ephemeral") == []


def test_notes_get_vectors_when_an_embedder_serves_the_project(alice, bob, use_embedder):
    run_jobs = use_embedder(alice)
    mine = write(alice, "a.md", "Rotate the TLS certificates every quarter.")
    write(bob, "b.md", "Rotate the TLS certificates of bob.")
    shared = write(bob, "team.md", "Certificates expire; rotate them.", scope="shared")
    run_jobs()

    vectors = ItemEmbedding.objects.filter(kind=ItemKind.NOTE)
    results = _search(alice, "rotate certificates")

    assert vectors.count() == 3
    assert {r["id"] for r in results} == {mine["id"], shared["id"]}
    assert all("vector" in r["signals"] for r in results)
    # An edit drops the note's old vector; the job makes a new one.
    alice.patch(f"/api/v1/notes/{mine['id']}", {"version": 1, "content": "Quarterly TLS work."})
    assert vectors.filter(item__note_id=mine["id"]).count() == 0
    run_jobs()
    assert vectors.filter(item__note_id=mine["id"]).count() == 1


def test_note_search_serves_a_tool_with_plain_arguments(alice, bob):
    write(alice, "a.md", "Invoices go out on the first Monday.")
    write(bob, "b.md", "Invoices of bob.")

    found = note_search(agent=alice.agent, query="invoices", top_k=5)

    assert [f.note.path for f in found] == ["a.md"]
    assert found[0].score > 0 and "lexical" in found[0].signals


def test_note_search_finds_nothing_for_words_no_note_holds(alice, use_embedder):
    # With vectors every note has some similarity to any query: the floor keeps the unrelated
    # ones out, as POST /search does (the tool listed them, above the note that matched).
    run_jobs = use_embedder(alice)
    write(alice, "todo.md", "buy milk")
    write(alice, "people/carol.md", "updated")
    run_jobs()

    assert note_search(agent=alice.agent, query="zebra quantum", top_k=5) == []
    assert _search(alice, "zebra quantum") == []
    found = note_search(agent=alice.agent, query="milk", top_k=5)
    assert [f.note.path for f in found] == ["todo.md"]
