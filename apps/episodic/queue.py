"""The moderation queue: entries filtered by source, agent, resource, status and age, sorted,
and approved or rejected all at once however many match.

A bulk decision is one UPDATE of the matching pending entries (and one of their search rows),
not a save per entry, so a queue of thousands is cleared in one request. It is audited as one
event per project that lists the ids it changed and the filter that chose them.
"""

from datetime import timedelta

from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from apps.audit.services import audit_record
from apps.episodic.approval import ORIGINS, origin_filter
from apps.episodic.models import EntryStatus, MemoryEntry
from apps.episodic.selectors import entry_browse
from apps.episodic.supersession import supersession_apply
from apps.search.indexing import index_set_visible

# ?age= -> (newer than, older than) the entry's creation, as a time before now
AGES = {
    "hour": (timedelta(hours=1), None),
    "day": (timedelta(days=1), None),
    "week": (timedelta(days=7), None),
    "older-than-week": (None, timedelta(days=7)),
}
AGE_LABELS = {
    "hour": "the last hour",
    "day": "the last day",
    "week": "the last week",
    "older-than-week": "older than a week",
}
# ?sort= -> ORDER BY
SORTS = {
    "newest": ("-created_at", "-id"),
    "oldest": ("created_at", "id"),
    "source": ("source", "-created_at", "-id"),
    "agent": ("agent__project__slug", "agent__slug", "-created_at", "-id"),
}
# Ids per UPDATE: under SQLite's 32,766 and PostgreSQL's 65,535 bound parameters.
UPDATE_CHUNK = 10_000


def entry_queue(
    *,
    agent_id=None,
    resource: str = "",
    status: str | None = EntryStatus.PENDING,
    origin: str = "",
    age: str = "",
    sort: str = "newest",
) -> QuerySet[MemoryEntry]:
    """Return the entries the queue's filters choose, in the chosen order (values checked by
    the caller: an unknown origin, age or sort raises KeyError)."""
    entries = entry_browse(agent_id=agent_id, resource=resource, status=status)
    if origin:
        if origin not in ORIGINS:  # the caller's error, never "every origin"
            raise KeyError(origin)
        entries = entries.filter(origin_filter(origin))
    if age:
        newer, older = AGES[age]
        now = timezone.now()
        if newer is not None:
            entries = entries.filter(created_at__gte=now - newer)
        if older is not None:
            entries = entries.filter(created_at__lt=now - older)
    return entries.order_by(*SORTS[sort or "newest"])


def entries_moderate_matching(
    *, entries: QuerySet[MemoryEntry], action: str, actor: str, described: str
) -> int:
    """Approve or reject every pending entry of `entries`; return how many changed.

    1. Lock and list the matching pending entries (a row lock on PostgreSQL; SQLite runs one
       writer at a time), so what is audited is what is changed.
    2. One UPDATE of their status (per UPDATE_CHUNK ids), one of their search rows' visibility.
    3. Approved entries that supersede an older one retire it, one by one (they are few).
    4. One audit event per project: the action, the filter as the moderator described it, ids.
    Only pending entries are decided in bulk: they are live already, so approving them cannot
    collide with a live twin, and a rejected entry is brought back one at a time.
    """
    status = {"approve": EntryStatus.APPROVED, "reject": EntryStatus.REJECTED}[action]
    now = timezone.now()
    with transaction.atomic():
        pending = MemoryEntry.objects.filter(
            pk__in=entries.order_by().filter(status=EntryStatus.PENDING).values("pk")
        )
        rows = list(pending.select_for_update(of=("self",)).values_list("pk", "agent__project_id"))
        ids = [pk for pk, _ in rows]
        changes = {"status": status, "status_changed_by": actor, "status_changed_at": now}
        if status == EntryStatus.APPROVED:
            changes["valid_from"] = now
        for start in range(0, len(ids), UPDATE_CHUNK):
            chunk = ids[start : start + UPDATE_CHUNK]
            MemoryEntry.objects.filter(pk__in=chunk).update(**changes, updated_at=now)
            index_set_visible(items=Q(entry__in=chunk), visible=status == EntryStatus.APPROVED)
            if status == EntryStatus.APPROVED:
                for entry in MemoryEntry.objects.filter(pk__in=chunk, supersedes__isnull=False):
                    supersession_apply(entry=entry, actor=actor)
        by_project: dict = {}
        for pk, project_id in rows:
            by_project.setdefault(project_id, []).append(str(pk))
        for project_id, changed in by_project.items():
            audit_record(
                actor=actor,
                action=f"entry.bulk_{action}",
                object_type="memory_entry",
                project_id=project_id,
                summary=f"{action} {len(changed)} pending entries: {described}",
                after={
                    "status": status,
                    "count": len(changed),
                    "filter": described,
                    "ids": changed,
                },
            )
    return len(ids)
