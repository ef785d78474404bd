from apps.episodic.models import MemoryEntry
from apps.episodic.selectors import entry_similar


def _propose(actor, content, resource_id=None) -> MemoryEntry:
    body = {"content": content, **({"resource_id": resource_id} if resource_id else {})}
    response = actor.post("/api/v1/episodic", body)
    assert response.status_code == 201, response.content
    return MemoryEntry.objects.get(pk=response.json()["id"])


def test_similar_entries_of_an_entry_without_a_resource_are_those_without_one(alice, use_embedder):
    run_jobs = use_embedder(alice)
    loose = _propose(alice, "The VPN drops every day at 5pm")
    twin = _propose(alice, "The VPN drops every evening at 5pm")
    elsewhere = _propose(alice, "The VPN drops every day at 5pm for this customer", "cust-1")
    run_jobs()

    assert [s.entry for s in entry_similar(entry=loose).entries] == [twin]
    assert [s.entry for s in entry_similar(entry=elsewhere).entries] == []


def test_without_an_embedder_there_are_no_similar_entries_and_it_says_why(alice):
    first = _propose(alice, "The VPN drops every day at 5pm")
    _propose(alice, "The VPN drops every day at 5pm sharp")

    similar = entry_similar(entry=first)

    assert similar.entries == []
    assert "no embedder serves this project" in similar.unavailable


def test_similar_entries_are_ranked_by_cosine_with_their_score(alice, use_embedder):
    run_jobs = use_embedder(alice)
    first = _propose(alice, "The VPN drops every day at 5pm")
    near = _propose(alice, "The VPN drops every day at 5pm sharp")
    far = _propose(alice, "Invoices are exported as CSV on Mondays")
    run_jobs()

    similar = entry_similar(entry=first)

    assert similar.unavailable == ""
    assert [s.entry for s in similar.entries][0] == near
    scores = [s.score for s in similar.entries]
    assert scores == sorted(scores, reverse=True) and 0 < scores[0] <= 1
    assert far not in [s.entry for s in similar.entries[:1]]
