"""Migrations 0002-0003: duplicates stored before the constraint are superseded, not refused."""

from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from apps.episodic.models import MemoryEntry
from apps.search.models import SearchItem
from tests.conftest import make_actor

BEFORE = [("episodic", "0001_initial")]
AFTER = [("episodic", "0003_entry_hash_unique_live")]


def _migrate(targets) -> None:
    MigrationExecutor(connection).migrate(targets)


def _entry(agent, content_hash, status="pending"):
    entry = MemoryEntry.objects.create(
        agent=agent, content="The VPN drops", content_hash=content_hash, source="api", status=status
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


def test_it_keeps_the_oldest_live_duplicate_and_supersedes_the_others(transactional_db):
    alice = make_actor("acme", "alice")
    _migrate(BEFORE)  # the old constraint let entries without a resource repeat
    rejected = _entry(alice.agent, "h1", status="rejected")
    oldest = _entry(alice.agent, "h1", status="approved")
    repeats = [_entry(alice.agent, "h1", status="approved"), _entry(alice.agent, "h1")]
    other = _entry(alice.agent, "h2")

    _migrate(AFTER)

    statuses = dict(MemoryEntry.objects.values_list("id", "status"))
    assert statuses[oldest.id] == "approved"
    assert statuses[rejected.id] == "rejected"
    assert statuses[other.id] == "pending"
    for repeat in repeats:
        repeat.refresh_from_db()
        assert repeat.status == "superseded"
        assert repeat.metadata["duplicate_of"] == str(oldest.id)
        assert SearchItem.objects.get(entry=repeat).visible is False
    assert SearchItem.objects.get(entry=oldest).visible is True
