"""Writes of memory entries: create with evidence checks and dedupe, moderate, delete.

Edits (the API's PATCH, the console's edit-then-approve) live in apps/episodic/edits.py.
"""

import hashlib
import logging
import re
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
from django.db import IntegrityError, transaction
from django.db.models import Case, F, Q, Value, When
from django.utils import timezone

from apps.audit.services import audit_record, audit_subject
from apps.core.database import DELETED_MEANWHILE, deleted_meanwhile
from apps.core.errors import ApplicationError, Conflict, Unprocessable
from apps.episodic.approval import entry_initial_status, entry_origin
from apps.episodic.models import LIVE_STATUSES, EntrySource, EntryStatus, MemoryEntry
from apps.episodic.supersession import supersession_apply, validity_close, validity_open
from apps.memconfig.selectors import config_effective
from apps.providers.embeddings import embedder_for, embeddings_precomputed
from apps.providers.errors import EmbeddingError
from apps.search.indexing import index_entry, index_set_visible
from apps.search.scope import Scope
from apps.search.selectors import nearest, query_vector
from apps.search.vectors import vector_model_serving
from apps.tenancy.models import Agent, Resource
from apps.threads.models import Message, Role, Thread

logger = logging.getLogger(__name__)
_SPACE = re.compile(r"\s+")
# Entries proposed since the vector job last ran have no vector yet. Up to this many of the
# scope's newest are embedded while a proposal is checked, so a near-duplicate sent right after
# them is caught; a longer backlog (embedder down for a while) must not make proposals slow.
FRESH_ENTRIES_COMPARED = 20
# Labels that claim the entry came out of a transcript, so their evidence must be found in it.
TRANSCRIPT_SOURCES = {
    EntrySource.USER_ASSERTION,
    EntrySource.USER_ACCEPTED_ASSISTANT_PROPOSAL,
    EntrySource.VERIFIED_ASSISTANT_FINDING,
}
USER_SOURCES = {EntrySource.USER_ASSERTION, EntrySource.USER_ACCEPTED_ASSISTANT_PROPOSAL}


@dataclass(frozen=True)
class EntryResult:
    entry: MemoryEntry
    created: bool
    duplicate_of: str | None = None  # "hash" or "similarity" when an existing entry was returned
    similarity: float | None = None


def normalise(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def content_hash(text: str) -> str:
    return hashlib.sha256(normalise(text).lower().encode()).hexdigest()


def entry_create(
    *,
    agent: Agent,
    resource: Resource | None,
    content: str,
    source: str,
    evidence: str = "",
    thread: Thread | None = None,
    message: Message | None = None,
    kind: str = "episodic",
    metadata: dict | None = None,
    actor: str,
    by_operator: bool = False,
    supersedes: MemoryEntry | None = None,
    extraction=None,
) -> EntryResult:
    """Store an entry unless an equal (hash) or near-equal (similarity) one exists in its scope.

    1. Normalise and bound the content.
    2. Find the evidence verbatim in the named message (or the thread), of the right role.
    3. Dedupe by normalised hash, then by embedding similarity when vectors are available.
    4. Store it pending, or approved when its origin's approval rule says so, and index it. The
       database holds one live entry per hash and scope, so of concurrent proposals of the same
       content one is stored and the others are answered with it, as a hash duplicate.
    5. If it is approved and supersedes an older live entry of its scope, that one becomes
       superseded (a pending entry supersedes when it is approved).
    """
    config = config_effective(agent=agent)
    content = normalise(content)
    limit = config["episodic_max_entry_length"]
    if not content:
        raise ApplicationError("content: must not be blank.")
    if len(content) > limit:
        raise ApplicationError(
            f"content: {len(content)} characters; the limit (episodic_max_entry_length) is {limit}."
        )
    message = _check_evidence(source, evidence, thread, message)
    digest = content_hash(content)
    existing = _by_hash(agent, resource, digest)
    if existing is not None:
        return EntryResult(existing, created=False, duplicate_of="hash")
    similar = _most_similar(agent, resource, content)
    if similar is not None and similar[1] >= config["episodic_dedupe_threshold"]:
        return EntryResult(
            similar[0], created=False, duplicate_of="similarity", similarity=similar[1]
        )
    origin = entry_origin(source=source, extraction=extraction)
    status = entry_initial_status(config=config, origin=origin, by_operator=by_operator)
    approved = status == EntryStatus.APPROVED
    now = timezone.now()
    try:
        with transaction.atomic():
            entry = MemoryEntry.objects.create(
                agent=agent,
                resource=resource,
                kind=kind,
                content=content,
                content_hash=digest,
                source=source,
                evidence=evidence,
                thread=thread or (message.thread if message else None),
                message=message,
                status=EntryStatus.APPROVED if approved else EntryStatus.PENDING,
                status_changed_by=actor if approved else "",
                status_changed_at=now if approved else None,
                valid_from=now if approved else None,
                metadata=metadata or {},
                supersedes=supersedes,
                extraction=extraction,
            )
            index_entry(entry=entry, visible=approved)
            _audit(entry, actor, "entry.create", before=None, after=_snapshot(entry))
            supersession_apply(entry=entry, actor=actor)
    except IntegrityError:
        # A concurrent proposal stored the same content first (PostgreSQL made this insert wait
        # for its commit; SQLite ran the two one after the other): answer with that entry.
        existing = _by_hash(agent, resource, digest)
        if existing is not None:
            return EntryResult(existing, created=False, duplicate_of="hash")
        # Or a row it names was deleted meanwhile: its foreign key failed at the commit.
        gone = deleted_meanwhile(
            {
                "thread_id": thread,
                "message_id": message,  # gone with its thread too
                "resource_id": resource,
                "supersedes": supersedes,
            }
        )
        if gone is None:
            raise
        raise Conflict(
            f"{gone}: {DELETED_MEANWHILE}",
            code="deleted_meanwhile",
        ) from None
    return EntryResult(entry, created=True)


def _check_evidence(source, evidence, thread, message) -> Message | None:
    """Return the message the evidence is quoted from; raise if it is not found there.

    Evidence that names a message must occur in it verbatim whatever the source; transcript
    sources must also quote one, from a message of the right role.
    """
    if source not in TRANSCRIPT_SOURCES:
        if message is not None and evidence and evidence not in message.content:
            raise Unprocessable(
                f"evidence: not found verbatim in message {message.id}; evidence that names a "
                "message must quote it exactly."
            )
        return message
    # The API hands over EntrySource members; a message names the value a client sends.
    label = getattr(source, "value", source)
    if not evidence:
        raise ApplicationError(f"evidence: required for source {label!r}: quote the transcript.")
    if message is None and thread is None:
        raise ApplicationError(
            "evidence: name the message_id (or thread_id) it is quoted from, so it can be checked."
        )
    if message is not None:
        candidates = [message]
    else:
        candidates = list(thread.messages.filter(content__contains=evidence).order_by("seq")[:20])
    roles = {Role.USER} if source in USER_SOURCES else {Role.USER, Role.ASSISTANT}
    for candidate in candidates:
        if evidence in candidate.content and candidate.role in roles:
            return candidate
    where = f"message {message.id}" if message is not None else "any message of the thread"
    who = "a user" if source in USER_SOURCES else "a user or assistant"
    raise Unprocessable(
        f"evidence: not found verbatim in {where} from {who}; "
        f"source {label!r} needs an exact quote."
    )


def _by_hash(agent, resource, digest) -> MemoryEntry | None:
    """Return the scope's entry with this hash: the live one if any, else the latest dead one.

    Rejected entries still count, so proposing the same thing again does not resurface it.
    """
    return (
        MemoryEntry.objects.filter(agent=agent, resource=resource, content_hash=digest)
        .order_by(
            Case(When(status__in=LIVE_STATUSES, then=Value(0)), default=Value(1)),
            "-created_at",
            "-id",
        )
        .first()
    )


def _most_similar(agent, resource, content, exclude=None) -> tuple[MemoryEntry, float] | None:
    """Return the entry of the same agent and resource closest to content, with its cosine.

    1. Embed content with the project's serving model; without one (none configured, or the
       embedder failed) only the hash dedupes.
    2. Ask the vector index for the nearest entry that has a vector.
    3. Embed the scope's newest entries that have no vector yet and compare them too. Checking
       them here, rather than when their vector arrives, answers the proposer at once with the
       entry it repeats, like the hash dedupe, instead of storing a row that a background job
       would later mark superseded. (Two near-duplicates proposed at the very same moment do
       not see each other; both are stored, pending moderation, which shows similar entries.)
    """
    vector = query_vector(project_id=agent.project_id, query=content)
    if vector is None:
        return None
    best = _nearest_embedded(agent, resource, vector, exclude)
    fresh = _nearest_fresh(agent, resource, vector, exclude)
    if fresh is not None and (best is None or fresh[1] > best[1]):
        return fresh
    return best


def _nearest_embedded(agent, resource, vector, exclude=None) -> tuple[MemoryEntry, float] | None:
    scope = Scope(
        kind="entry",
        project_id=agent.project_id,
        agent_id=agent.id,
        resource_id=resource.id if resource else None,
        without_resource=resource is None,
        visible_only=False,
    )
    # Rejected entries still count: proposing the same thing again should not resurface it.
    hits = nearest(scope=scope, vector=vector, limit=2)
    for item_id, similarity in hits:
        entry = MemoryEntry.objects.get(search_item__id=item_id)
        if entry.pk != exclude:
            return entry, similarity
    return None


def _nearest_fresh(agent, resource, vector, exclude=None) -> tuple[MemoryEntry, float] | None:
    """Compare the scope's newest entries without a vector of the serving model yet."""
    fresh = _fresh_entries(agent, resource, vector.model, exclude)
    if not fresh:
        return None
    try:
        embedded = embedder_for(vector.model, vector.dims).embed([e.content for e in fresh])
    except EmbeddingError as error:
        logger.warning("entries of agent %s compared without fresh vectors: %s", agent.id, error)
        return None
    # Vectors are unit length, so the dot product is the cosine.
    similarities = np.asarray(embedded, np.float32) @ vector.vector
    best = int(np.argmax(similarities))
    return fresh[best], float(similarities[best])


def _fresh_entries(agent, resource, model: str, exclude=None) -> list[MemoryEntry]:
    return list(
        MemoryEntry.objects.filter(agent=agent, resource=resource)
        .exclude(search_item__embeddings__model=model)
        .exclude(pk=exclude)
        .order_by("-created_at", "-id")[:FRESH_ENTRIES_COMPARED]
    )


@contextmanager
def entries_embedded_ahead(*, agent: Agent, resource: Resource | None, contents: list[str]):
    """Embed now what entry_create's similarity checks of these contents will embed.

    For a caller that creates several entries in one transaction (consolidation): the checks
    then embed nothing inside it, so the transaction (on SQLite, the database's one write lock)
    lasts as long as the writes, not as long as the embedder.
    """
    serving = vector_model_serving(project_id=agent.project_id)
    if serving is None:
        yield
        return
    texts = [normalise(content) for content in contents]
    texts += [entry.content for entry in _fresh_entries(agent, resource, serving.model)]
    with embeddings_precomputed(serving.model, serving.dims, texts):
        yield


def entry_set_status(*, entry: MemoryEntry, status: str, actor: str) -> MemoryEntry:
    """Approve or reject an entry; approving one that supersedes another retires the other."""
    before = _snapshot(entry)
    if status == EntryStatus.APPROVED and entry.status != EntryStatus.APPROVED:
        validity_open(entry)
    elif status != EntryStatus.APPROVED:
        validity_close(entry)
    entry.status = status
    entry.status_changed_by = actor
    entry.status_changed_at = timezone.now()
    fields = ["status", "status_changed_by", "status_changed_at", "valid_from", "valid_to"]
    with transaction.atomic():
        # Approving a rejected or superseded entry makes it live again: 409 if its twin is live.
        _save_unless_twin(entry, update_fields=[*fields, "updated_at"])
        index_set_visible(items=Q(entry=entry), visible=status == EntryStatus.APPROVED)
        action = {EntryStatus.APPROVED: "entry.approve", EntryStatus.REJECTED: "entry.reject"}
        _audit(
            entry, actor, action.get(status, "entry.status"), before=before, after=_snapshot(entry)
        )
        supersession_apply(entry=entry, actor=actor)
    return entry


def _save_unless_twin(entry: MemoryEntry, *, update_fields: list[str]) -> None:
    """Save the entry; if a live entry of its scope already says the same, raise a 409."""
    try:
        with transaction.atomic():
            entry.save(update_fields=update_fields)
    except IntegrityError:
        conflict = _twin_conflict(entry)
        if conflict is None:
            raise
        raise conflict from None


def _twin_conflict(entry: MemoryEntry) -> Conflict | None:
    """Return the 409 for a live entry of the scope saying what entry now says, or None."""
    twin = (
        MemoryEntry.objects.filter(
            agent=entry.agent_id,
            resource=entry.resource_id,
            content_hash=entry.content_hash,
            status__in=LIVE_STATUSES,
        )
        .exclude(pk=entry.pk)
        .first()
    )
    if twin is None:
        return None
    return Conflict(
        f"content: entry {twin.id} ({twin.status}) of this agent and resource already says "
        "this; reject or delete one of them first.",
        details={"entry_id": str(twin.id)},
        code="duplicate",
    )


def entry_delete(*, entry: MemoryEntry, actor: str) -> None:
    _audit(entry, actor, "entry.delete", before=_snapshot(entry), after=None)
    entry.delete()


# Moderation from the console. Each step goes through the functions above, so it is audited.
BULK_ACTIONS = ("approve", "reject", "delete")


def entry_bulk_moderate(*, entries, action: str, actor: str) -> int:
    """Approve, reject or delete entries; return how many changed (no-ops are not counted)."""
    if action not in BULK_ACTIONS:
        raise ApplicationError(f"action: must be one of {', '.join(BULK_ACTIONS)}.")
    status = {"approve": EntryStatus.APPROVED, "reject": EntryStatus.REJECTED}.get(action)
    changed = 0
    with transaction.atomic():
        for entry in entries:
            if action == "delete":
                entry_delete(entry=entry, actor=actor)
            elif entry.status != status:
                entry_set_status(entry=entry, status=status, actor=actor)
            else:
                continue
            changed += 1
    return changed


def _snapshot(entry: MemoryEntry) -> dict:
    return {"content": entry.content, "status": entry.status, "source": entry.source}


def _audit(entry: MemoryEntry, actor: str, action: str, *, before, after) -> None:
    audit_record(
        actor=actor,
        action=action,
        object_type="memory_entry",
        object_id=entry.id,
        project_id=entry.agent.project_id,
        summary=entry.content[:120],
        before=before,
        after=after,
        subject=_subject(entry),
    )


def _subject(entry: MemoryEntry) -> str:
    """The end user an entry is about: its resource, else the one of the thread it came from."""
    resource_id = entry.resource_id
    if resource_id is None and entry.thread_id is not None:
        resource_id = entry.thread.resource_id
    return audit_subject(entry.agent_id, resource_id)


def entries_mark_recalled(*, entry_ids: list) -> None:
    MemoryEntry.objects.filter(pk__in=entry_ids).update(
        recall_count=F("recall_count") + 1, last_recalled_at=timezone.now()
    )
