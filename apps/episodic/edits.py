"""Edits of an entry's text: the API's PATCH and the console's edit-then-approve.

An edit is checked as a new proposal would be (length, evidence still verbatim in its message,
no live entry of the scope saying the same, none nearer than the dedupe threshold), bumps the
entry's version, keeps the previous text in the audit log, and re-indexes the entry (its old
vectors are dropped and the new text is embedded in the background).
"""

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from apps.core.errors import ApplicationError, Conflict
from apps.episodic.models import EntryStatus, MemoryEntry
from apps.episodic.services import (
    _audit,
    _by_hash,
    _check_evidence,
    _most_similar,
    _snapshot,
    _twin_conflict,
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

    1. Refuse a stale version or a superseded entry at once, from the row as read.
    2. Check the new text (outside the transaction: the similarity check may call the embedder).
    3. Write with a conditional UPDATE on the version everything was checked against, so of
       several writers that read the same version exactly one wins and the others get a 409
       naming the current version (a Python comparison alone let each of them overwrite).
    """
    if version is not None and version != entry.version:
        raise _stale(entry, version, current=entry.version)
    if entry.status == EntryStatus.SUPERSEDED:
        raise _superseded(entry.id, entry.superseded_by_id)
    new_content = entry_edit_check(entry=entry, content=content) if content is not None else None
    changed_text = new_content is not None and new_content != entry.content
    if not changed_text and (metadata is None or metadata == entry.metadata):
        return entry
    before = _snapshot(entry)
    read_version = entry.version
    fields = ["metadata"]
    with transaction.atomic():
        if metadata is not None:
            entry.metadata = metadata
        if changed_text:
            entry.content = new_content
            entry.content_hash = content_hash(new_content)
            fields += ["content", "content_hash"]
        _update_if_version(entry, read_version, fields)
        if changed_text:
            index_set_content(item=entry.search_item, content=entry.content)
        after = {**_snapshot(entry), "version": entry.version}
        _audit(entry, actor, "entry.edit", before={**before, "version": read_version}, after=after)
        if changed_text and requires_approval and entry.status == EntryStatus.APPROVED:
            entry_set_status(entry=entry, status=EntryStatus.PENDING, actor=actor)
    return entry


def _update_if_version(entry: MemoryEntry, read_version: int, fields: list[str]) -> None:
    """Write the entry's fields and bump its version, if it is still at read_version and live."""
    now = timezone.now()
    try:
        with transaction.atomic():
            updated = (
                MemoryEntry.objects.filter(pk=entry.pk, version=read_version)
                .exclude(status=EntryStatus.SUPERSEDED)
                .update(
                    version=F("version") + 1,
                    updated_at=now,
                    **{field: getattr(entry, field) for field in fields},
                )
            )
    except IntegrityError:
        conflict = _twin_conflict(entry)
        if conflict is None:
            raise
        raise conflict from None
    if not updated:
        current = (
            MemoryEntry.objects.filter(pk=entry.pk)
            .values("version", "status", "superseded_by_id")
            .first()
        )
        if current is None:
            raise Conflict(f"entry {entry.id} was deleted since you read it.", code="deleted")
        if current["status"] == EntryStatus.SUPERSEDED:
            raise _superseded(entry.id, current["superseded_by_id"])
        raise _stale(entry, read_version, current=current["version"])
    entry.version = read_version + 1
    entry.updated_at = now


def _stale(entry: MemoryEntry, version: int, *, current: int) -> Conflict:
    return Conflict(
        f"version: {version} is stale; the entry is at version {current}. "
        "Read it again and re-apply the change.",
        details={"current_version": current},
        code="stale_version",
    )


def _superseded(entry_id, superseded_by_id) -> Conflict:
    return Conflict(
        f"entry {entry_id} is superseded by {superseded_by_id}: it is kept as history and "
        "cannot change; edit its successor instead.",
        code="superseded",
    )


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
