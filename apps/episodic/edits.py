"""Edits of an entry's text: the API's PATCH and the console's edit-then-approve.

An edit is checked as a new proposal would be (length, evidence still verbatim in its message,
no live entry of the scope saying the same, none nearer than the dedupe threshold), bumps the
entry's version, keeps the previous text in the audit log, and re-indexes the entry (its old
vectors are dropped and the new text is embedded in the background).
"""

from django.db import transaction

from apps.core.errors import ApplicationError, Conflict
from apps.episodic.models import EntryStatus, MemoryEntry
from apps.episodic.services import (
    _audit,
    _by_hash,
    _check_evidence,
    _most_similar,
    _save_unless_twin,
    _snapshot,
    content_hash,
    entry_set_status,
    normalise,
)
from apps.memconfig.selectors import config_effective
from apps.search.indexing import index_set_content


def entry_edit_check(*, entry: MemoryEntry, content: str) -> str:
    """Return the normalised new text, or raise what is wrong with it, as entry_create would.

    1. Not blank, not over episodic_max_entry_length.
    2. The entry's evidence still occurs verbatim in its message (of the right role).
    3. No other entry of the scope has the same normalised text (409).
    4. None is as similar as episodic_dedupe_threshold, when an embedder serves the project.
    """
    content = normalise(content)
    if not content:
        raise ApplicationError("content: must not be blank; write the entry's text or reject it.")
    config = config_effective(agent=entry.agent)
    limit = config["episodic_max_entry_length"]
    if len(content) > limit:
        raise ApplicationError(
            f"content: {len(content)} characters; the limit (episodic_max_entry_length) is {limit}."
        )
    if content == entry.content:
        return content
    _check_evidence(entry.source, entry.evidence, entry.thread, entry.message)
    digest = content_hash(content)
    twin = _by_hash(entry.agent, entry.resource, digest) if digest != entry.content_hash else None
    if twin is not None and twin.pk != entry.pk:
        raise Conflict(
            f"content: entry {twin.id} ({twin.status}) of this agent and resource already says "
            "this; reject or delete this one instead.",
            details={"entry_id": str(twin.id)},
            code="duplicate",
        )
    similar = _most_similar(entry.agent, entry.resource, content, exclude=entry.pk)
    threshold = config["episodic_dedupe_threshold"]
    if similar is not None and similar[1] >= threshold:
        other, score = similar
        raise Conflict(
            f"content: entry {other.id} ({other.status}) of this agent and resource is "
            f"{score:.2f} similar (episodic_dedupe_threshold is {threshold:g}); "
            "reject or delete this one instead.",
            details={"entry_id": str(other.id), "similarity": round(score, 4)},
            code="duplicate",
        )
    return content


def entry_update(
    *,
    entry: MemoryEntry,
    actor: str,
    content: str | None = None,
    metadata: dict | None = None,
    version: int | None = None,
    requires_approval: bool = False,
) -> MemoryEntry:
    """Change an entry's text and/or metadata as one audited, versioned change.

    version, when given, is the version the caller read: a stale one is a 409. With
    requires_approval, an approved entry whose text changes goes back to pending, so moderators
    see the words that will be recalled.
    """
    if version is not None and version != entry.version:
        raise Conflict(
            f"version: {version} is stale; the entry is at version {entry.version}. "
            "Read it again and re-apply the change.",
            code="stale_version",
        )
    if entry.status == EntryStatus.SUPERSEDED:
        raise Conflict(
            f"entry {entry.id} is superseded by {entry.superseded_by_id}: it is kept as history "
            "and cannot change; edit its successor instead.",
            code="superseded",
        )
    new_content = entry_edit_check(entry=entry, content=content) if content is not None else None
    changed_text = new_content is not None and new_content != entry.content
    if not changed_text and (metadata is None or metadata == entry.metadata):
        return entry
    before = _snapshot(entry)
    fields = ["metadata", "version", "updated_at"]
    with transaction.atomic():
        if metadata is not None:
            entry.metadata = metadata
        if changed_text:
            entry.content = new_content
            entry.content_hash = content_hash(new_content)
            fields += ["content", "content_hash"]
        entry.version += 1
        _save_unless_twin(entry, update_fields=fields)
        if changed_text:
            index_set_content(item=entry.search_item, content=entry.content)
        after = {**_snapshot(entry), "version": entry.version}
        _audit(
            entry, actor, "entry.edit", before={**before, "version": entry.version - 1}, after=after
        )
        if changed_text and requires_approval and entry.status == EntryStatus.APPROVED:
            entry_set_status(entry=entry, status=EntryStatus.PENDING, actor=actor)
    return entry


def entry_edit(*, entry: MemoryEntry, content: str, actor: str) -> MemoryEntry:
    """A moderator's change of an entry's text (checked as above), status unchanged."""
    return entry_update(entry=entry, content=content, actor=actor)


def entry_edit_approve(*, entry: MemoryEntry, content: str, actor: str) -> MemoryEntry:
    """Save a moderator's rewording of an entry and approve it, as one change."""
    with transaction.atomic():
        entry_update(entry=entry, content=content, actor=actor)
        if entry.status != EntryStatus.APPROVED:
            entry_set_status(entry=entry, status=EntryStatus.APPROVED, actor=actor)
    return entry
