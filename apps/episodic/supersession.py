"""Knowledge updates: a newer entry supersedes an older one of its scope, and the chain stays.

An entry is current from its approval (valid_from) until it is superseded or rejected
(valid_to). Nothing is deleted and no text is overwritten, so recall can answer what was
current at any earlier time (as Zep/Graphiti keep facts bi-temporally), rather than only now.
"""

from django.db.models import Q
from django.utils import timezone

from apps.audit.services import audit_record, audit_subject
from apps.episodic.models import LIVE_STATUSES, EntryStatus, MemoryEntry
from apps.search.indexing import index_set_visible


def validity_open(entry: MemoryEntry) -> None:
    """Start the entry's current interval now (it was just approved); the caller saves."""
    entry.valid_from = timezone.now()
    entry.valid_to = None


def validity_close(entry: MemoryEntry) -> None:
    """End the entry's current interval now, if it had one; the caller saves."""
    if entry.valid_from is not None and entry.valid_to is None:
        entry.valid_to = timezone.now()


def supersession_apply(*, entry: MemoryEntry, actor: str) -> MemoryEntry | None:
    """Mark the entry this (approved) one supersedes superseded; return it, or None.

    Only a live entry of the same agent and resource can be superseded: a claim about another
    scope, or about an entry already rejected or superseded, changes nothing.
    """
    if entry.supersedes_id is None or entry.status != EntryStatus.APPROVED:
        return None
    older = MemoryEntry.objects.filter(
        pk=entry.supersedes_id,
        agent=entry.agent_id,
        resource=entry.resource_id,
        status__in=LIVE_STATUSES,
    ).first()
    if older is None or older.pk == entry.pk:
        return None
    before = older.status
    older.status = EntryStatus.SUPERSEDED
    older.superseded_by = entry
    older.status_changed_by = actor
    older.status_changed_at = timezone.now()
    validity_close(older)
    older.save(
        update_fields=[
            "status",
            "superseded_by",
            "status_changed_by",
            "status_changed_at",
            "valid_to",
            "updated_at",
        ]
    )
    index_set_visible(items=Q(entry=older), visible=False)
    resource_id = older.resource_id or (older.thread.resource_id if older.thread_id else None)
    audit_record(
        actor=actor,
        action="entry.supersede",
        object_type="memory_entry",
        object_id=older.id,
        project_id=entry.agent.project_id,
        summary=older.content[:120],
        before={"status": before, "content": older.content},
        after={"status": older.status, "superseded_by": str(entry.pk)},
        subject=audit_subject(older.agent_id, resource_id),
    )
    return older


def current_at(entries, at):
    """Filter entries (a queryset) to those approved and not yet superseded at time `at`."""
    return entries.filter(valid_from__lte=at).filter(Q(valid_to__isnull=True) | Q(valid_to__gt=at))
