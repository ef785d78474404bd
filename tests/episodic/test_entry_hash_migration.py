"""Migrations 0002-0003: duplicates stored before the constraint are superseded, not refused."""

from tests.conftest import make_actor
from tests.migrating import migrate

BEFORE = [("episodic", "0001_initial")]
AFTER = [("episodic", "0003_entry_hash_unique_live")]


def _entry(models, agent, content_hash, status="pending"):
    MemoryEntry = models.get_model("episodic", "MemoryEntry")
    SearchItem = models.get_model("search", "SearchItem")
    entry = MemoryEntry.objects.create(
        agent_id=agent.id,
        content="The VPN drops",
        content_hash=content_hash,
        source="api",
        status=status,
    )
    SearchItem.objects.create(
        kind="entry",
        project_id=agent.project_id,
        agent_id=agent.id,
        entry=entry,
        content=entry.content,
        visible=status == "approved",
        created_at=entry.created_at,
    )
    return entry


def test_it_keeps_the_oldest_live_duplicate_and_supersedes_the_others(back_to_latest):
    alice = make_actor("acme", "alice")
    old = migrate(BEFORE)  # the old constraint let entries without a resource repeat
    rejected = _entry(old, alice.agent, "h1", status="rejected")
    oldest = _entry(old, alice.agent, "h1", status="approved")
    repeats = [_entry(old, alice.agent, "h1", status="approved"), _entry(old, alice.agent, "h1")]
    other = _entry(old, alice.agent, "h2")

    models = migrate(AFTER)
    MemoryEntry = models.get_model("episodic", "MemoryEntry")
    SearchItem = models.get_model("search", "SearchItem")

    statuses = dict(MemoryEntry.objects.values_list("id", "status"))
    assert statuses[oldest.id] == "approved"
    assert statuses[rejected.id] == "rejected"
    assert statuses[other.id] == "pending"
    for repeat in repeats:
        repeat = MemoryEntry.objects.get(pk=repeat.pk)
        assert repeat.status == "superseded"
        assert repeat.metadata["duplicate_of"] == str(oldest.id)
        assert SearchItem.objects.get(entry_id=repeat.pk).visible is False
    assert SearchItem.objects.get(entry_id=oldest.pk).visible is True
