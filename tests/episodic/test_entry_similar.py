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

    assert [s.entry for s in entry_similar(entry=loose)] == [twin]
    assert [s.entry for s in entry_similar(entry=elsewhere)] == []
