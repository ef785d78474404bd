"""Reads of memory entries: within one agent's scope for the API, across agents for moderators."""

import uuid
from dataclasses import dataclass

from django.db.models import Count, QuerySet

from apps.core.errors import NotFound
from apps.episodic.models import EntryStatus, MemoryEntry
from apps.search.models import ItemKind
from apps.search.scope import Scope
from apps.search.selectors import query_vector, search, search_for_agent
from apps.tenancy.models import Agent


def entry_list(
    *, agent: Agent, resource_id: str | None = None, status: str | None = None, kind=None
):
    entries = MemoryEntry.objects.filter(agent=agent).select_related("resource")
    if resource_id is not None:
        entries = entries.filter(resource__external_id=resource_id)
    if status is not None:
        entries = entries.filter(status=status)
    if kind is not None:
        entries = entries.filter(kind=kind)
    return entries


@dataclass(frozen=True)
class RecalledEntry:
    entry: MemoryEntry
    score: float
    signals: dict


def entry_recall(
    *, agent: Agent, resource, query: str, top_k: int
) -> tuple[list[RecalledEntry], list[dict]]:
    """recall_memory: the agent's approved entries (of one end user, when given) ranked for the
    query, and the search's warnings."""
    found = search_for_agent(
        agent=agent,
        query=query,
        kinds=[ItemKind.ENTRY],
        resource_id=resource.id if resource else None,
        top_k=top_k,
    )
    entries = MemoryEntry.objects.select_related("resource").in_bulk([h.id for h in found.hits])
    recalled = [
        RecalledEntry(entries[hit.id], hit.score, hit.signals)
        for hit in found.hits
        if hit.id in entries
    ]
    return recalled, found.warnings


def entry_get(*, agent: Agent, entry_id: uuid.UUID) -> MemoryEntry:
    entry = MemoryEntry.objects.select_related("resource").filter(agent=agent, pk=entry_id).first()
    if entry is None:
        raise NotFound("No such memory entry.")
    return entry


def entry_counts() -> dict[str, int]:
    rows = MemoryEntry.objects.values_list("status").annotate(n=Count("id"))
    return dict(rows)


# --- Moderation: every agent's entries, for console moderators ---------------------------------


@dataclass(frozen=True)
class SimilarEntry:
    entry: MemoryEntry
    score: float


def entry_browse(
    *, agent_id=None, resource: str = "", status: str | None = EntryStatus.PENDING
) -> QuerySet[MemoryEntry]:
    """Entries of every agent, newest first, for moderators; status None means any status."""
    entries = MemoryEntry.objects.select_related(
        "agent__project", "resource", "message", "thread"
    ).order_by("-created_at", "-id")
    if agent_id:
        entries = entries.filter(agent_id=agent_id)
    if resource:
        entries = entries.filter(resource__external_id=resource)
    if status:
        entries = entries.filter(status=status)
    return entries


def entry_for_operator(*, entry_id: uuid.UUID) -> MemoryEntry:
    entry = entry_browse(status=None).filter(pk=entry_id).first()
    if entry is None:
        raise NotFound("No such memory entry: it may have been deleted.")
    return entry


def entry_similar(*, entry: MemoryEntry, limit: int = 3) -> list[SimilarEntry]:
    """Return existing entries of the same agent and resource closest to this one, any status."""
    project_id = entry.agent.project_id
    scope = Scope(
        kind=ItemKind.ENTRY,
        project_id=project_id,
        agent_id=entry.agent_id,
        resource_id=entry.resource_id,
        without_resource=entry.resource_id is None,
        visible_only=False,
    )
    # An unreachable embedder must not hide the queue: query_vector falls back to words.
    vector = query_vector(project_id=project_id, query=entry.content)
    hits = search(scopes=[scope], query=entry.content, top_k=limit + 1, vector=vector)
    others = [hit for hit in hits if hit.item.entry_id != entry.id]
    return [SimilarEntry(hit.item.entry, hit.score) for hit in others[:limit]]
