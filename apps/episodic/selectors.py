"""Reads of memory entries: within one agent's scope for the API, across agents for moderators."""

import uuid
from dataclasses import dataclass

from django.db.models import Count, QuerySet, Sum

from apps.core.errors import NotFound
from apps.episodic.models import EntryStatus, ExtractionRun, MemoryEntry
from apps.episodic.supersession import current_at
from apps.search.models import ItemKind
from apps.search.scope import Scope
from apps.search.selectors import (
    VECTORS_UNAVAILABLE,
    nearest,
    query_embed,
    search,
    search_for_agent,
    similarity_floor,
)
from apps.tenancy.models import Agent
from apps.tenancy.selectors import resource_id_clean, resource_id_form
from apps.threads.models import Message


def entry_list(
    *, agent: Agent, resource_id: str | None = None, status: str | None = None, kind=None
):
    entries = MemoryEntry.objects.filter(agent=agent).select_related("resource", "extraction")
    if resource_id is not None:
        entries = entries.filter(resource__external_id=resource_id_clean(resource_id))
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
    *, agent: Agent, resource, query: str, top_k: int, as_of=None
) -> tuple[list[RecalledEntry], list[dict]]:
    """recall_memory: the agent's approved entries (of one end user, when given) ranked for the
    query, and the search's warnings; with as_of, the entries current at that time instead."""
    if as_of is not None:
        return _recall_as_of(agent, resource, query, top_k, as_of)
    found = search_for_agent(
        agent=agent,
        query=query,
        kinds=[ItemKind.ENTRY],
        resource_id=resource.id if resource else None,
        top_k=top_k,
        floor=similarity_floor(agent=agent, value=None),  # as POST /search and the context
    )
    entries = MemoryEntry.objects.select_related("resource", "extraction").in_bulk(
        [h.id for h in found.hits]
    )
    recalled = [
        RecalledEntry(entries[hit.id], hit.score, hit.signals)
        for hit in found.hits
        if hit.id in entries
    ]
    return recalled, found.warnings


def _recall_as_of(agent, resource, query, top_k, as_of):
    """Rank every entry of the scope, then keep those current at as_of, best first.

    The index shows only what is current now, so this ranks hidden items too and filters after:
    the depth doubles until top_k current entries are found or the scope is exhausted, so the
    answer never comes back short because of the filter.
    """
    scope = Scope(
        kind=ItemKind.ENTRY,
        project_id=agent.project_id,
        agent_id=agent.id,
        resource_id=resource.id if resource else None,
        visible_only=False,
    )
    embedding = query_embed(project_id=agent.project_id, query=query)
    in_scope = MemoryEntry.objects.filter(agent=agent)
    if resource is not None:
        in_scope = in_scope.filter(resource=resource)
    total = in_scope.count()
    depth = top_k * 4
    while True:
        hits = search(scopes=[scope], query=query, top_k=depth, vector=embedding.vector)
        ids = [hit.item.entry_id for hit in hits]
        current = current_at(in_scope.filter(pk__in=ids), as_of).select_related(
            "resource", "extraction"
        )
        by_id = current.in_bulk()
        found = [
            RecalledEntry(by_id[hit.item.entry_id], hit.score, hit.signals)
            for hit in hits
            if hit.item.entry_id in by_id
        ]
        if len(found) >= top_k or len(hits) < depth or depth >= total:
            break
        depth *= 2
    warnings = [VECTORS_UNAVAILABLE] if embedding.failed else []
    return found[:top_k], warnings


def entry_get(*, agent: Agent, entry_id: uuid.UUID) -> MemoryEntry:
    entry = (
        MemoryEntry.objects.select_related("resource", "extraction")
        .filter(agent=agent, pk=entry_id)
        .first()
    )
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
        "agent__project", "resource", "message", "thread", "extraction"
    ).order_by("-created_at", "-id")
    if agent_id:
        entries = entries.filter(agent_id=agent_id)
    if resource:
        entries = entries.filter(resource__external_id=resource_id_form(resource))
    if status:
        entries = entries.filter(status=status)
    return entries


def entry_for_operator(*, entry_id: uuid.UUID) -> MemoryEntry:
    entry = entry_browse(status=None).filter(pk=entry_id).first()
    if entry is None:
        raise NotFound("No such memory entry: it may have been deleted.")
    return entry


@dataclass(frozen=True)
class SimilarEntries:
    entries: list[SimilarEntry]
    unavailable: str  # why similarity was not computed ("" when it was)


def entry_similar(*, entry: MemoryEntry, limit: int = 3) -> SimilarEntries:
    """Return the entries of the same agent and resource nearest to this one by their vectors.

    Similarity means cosine between embeddings, as the dedupe threshold does: without an
    embedder serving the project (or when it fails) there is none, and the reason is given
    instead of a word-overlap list that would read like one.
    """
    project_id = entry.agent.project_id
    embedding = query_embed(project_id=project_id, query=entry.content)
    if embedding.vector is None:
        reason = (
            "the embedder failed just now; similar entries return when it answers"
            if embedding.failed
            else "no embedder serves this project (set embedder_model), so entries have no "
            "vectors to compare"
        )
        return SimilarEntries([], reason)
    scope = Scope(
        kind=ItemKind.ENTRY,
        project_id=project_id,
        agent_id=entry.agent_id,
        resource_id=entry.resource_id,
        without_resource=entry.resource_id is None,
        visible_only=False,
    )
    hits = nearest(scope=scope, vector=embedding.vector, limit=limit + 1)
    found = []
    for item_id, score in hits:
        other = MemoryEntry.objects.filter(search_item__id=item_id).first()
        if other is not None and other.pk != entry.pk:
            found.append(SimilarEntry(other, score))
    return SimilarEntries(found[:limit], "")


# Messages shown around an entry's evidence: moderators read them without opening the thread.
TURN_BEFORE, TURN_AFTER = 3, 1


def entry_source_messages(*, entry: MemoryEntry) -> list:
    """Return the messages around the entry's evidence message, oldest first.

    Inside the turn it was extracted from when there is one (at most TURN_BEFORE before the
    evidence and TURN_AFTER after it), else the same neighbourhood in its thread.
    """
    if entry.message is None:
        return []
    messages = Message.objects.filter(thread_id=entry.message.thread_id)
    if entry.extraction is not None:
        messages = messages.filter(
            seq__gte=entry.extraction.first_seq, seq__lte=entry.extraction.last_seq
        )
    seq = entry.message.seq
    before = messages.filter(seq__lt=seq).order_by("-seq")[:TURN_BEFORE]
    after = messages.filter(seq__gt=seq).order_by("seq")[:TURN_AFTER]
    return [*reversed(before), entry.message, *after]


def entries_said_at(*, entry_ids) -> dict[str, object]:
    """Return when each of these entries' source message was said, by entry id as text (the
    entries without a source message are left out)."""
    rows = MemoryEntry.objects.filter(id__in=list(entry_ids), message__isnull=False)
    return {str(pk): said for pk, said in rows.values_list("id", "message__created_at")}


def entry_pending_count() -> int:
    return MemoryEntry.objects.filter(status=EntryStatus.PENDING).count()


def extraction_counts_by_agent() -> dict:
    """Return {agent_id: {"turns", "stored", "duplicates", "rejected"}} over all runs."""
    rows = ExtractionRun.objects.values("agent_id").annotate(
        turns=Count("id"),
        stored=Sum("stored"),
        duplicates=Sum("duplicates"),
        rejected=Sum("rejected"),
    )
    return {row.pop("agent_id"): row for row in rows}
