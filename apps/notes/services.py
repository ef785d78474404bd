"""Writes of notes: create, update with a version check, delete; each audited and indexed.

note_write / note_read / note_search are the tool-shaped entry points (an agent and plain
arguments), for the API and for any tool layer that lets a model keep notes.
"""

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from apps.audit.services import audit_record
from apps.core.database import delete_or_not_found
from apps.core.errors import Conflict
from apps.core.text import text_problem
from apps.notes.models import Note, NoteLink, NoteScope, NoteTag
from apps.notes.paths import (
    SUFFIX,
    links_in,
    path_check,
    refuse,
    tags_check,
    title_check,
    title_default,
)
from apps.notes.selectors import note_at_path, note_read, note_search
from apps.search.indexing import index_note, index_note_content
from apps.tenancy.models import Agent


def note_create(
    *,
    agent: Agent | None,
    scope: str,
    path: str,
    content: str = "",
    title: str | None = None,
    tags: list[str] | None = None,
    actor: str,
    version: int = 1,
    note_id=None,
    project=None,
) -> Note:
    """Store a new note in the agent's personal scope or its project's shared one.

    project (instead of agent) writes a shared note with no agent behind it, and version and
    note_id restore a note as it was; both are for imports. A note_id already in use is not
    taken (the note gets a new one). 409 when the scope already has the path.
    """
    if scope not in NoteScope.values:
        refuse("scope", f"must be one of {', '.join(NoteScope.values)}.")
    if agent is None and (scope == NoteScope.PERSONAL or project is None):
        refuse("agent", "a personal note needs the agent it belongs to.")
    project_id = agent.project_id if agent is not None else project.id
    if title is None:  # not given; an empty title given stays empty
        title = title_default(path, content)
    fields = _checked(path=path, content=content, title=title, tags=tags or [])
    note = Note(
        project_id=project_id,
        agent=agent if scope == NoteScope.PERSONAL else None,
        scope=scope,
        version=version,
        updated_by=actor,
        **fields,
    )
    if note_id is not None and not Note.objects.filter(pk=note_id).exists():
        note.pk = note_id
    try:
        with transaction.atomic():
            note.save(force_insert=True)
            _write_links_and_tags(note)
            index_note(note=note, content=search_text(note))
            _audit(note, actor, "note.create", before=None, after=_snapshot(note))
    except IntegrityError:
        existing = note_at_path(project_id=project_id, agent=note.agent, path=fields["path"])
        if existing is None:
            raise
        raise _path_taken(existing) from None
    return note


def note_update(
    *,
    note: Note,
    expected_version: int,
    actor: str,
    path: str | None = None,
    content: str | None = None,
    title: str | None = None,
    tags: list[str] | None = None,
) -> Note:
    """Change a note if it is still at expected_version, else 409 with the current version.

    The version is compared and raised in one UPDATE, so of two writers who read the same
    version exactly one wins; the other is told to re-read.
    """
    before = _snapshot(note)
    fields = _checked(
        path=note.path if path is None else path,
        content=note.content if content is None else content,
        title=note.title if title is None else title,
        tags=note.tags if tags is None else tags,
    )
    changed = {name: value for name, value in fields.items() if getattr(note, name) != value}
    if not changed:
        # Nothing to change: no new version, but a stale version is still refused.
        current = Note.objects.filter(pk=note.pk).values_list("version", flat=True).first()
        if current != expected_version:
            _raise_stale(note, expected_version)
        return note
    try:
        with transaction.atomic():
            updated = Note.objects.filter(pk=note.pk, version=expected_version).update(
                version=F("version") + 1, updated_by=actor, updated_at=timezone.now(), **changed
            )
            if not updated:
                _raise_stale(note, expected_version)
            note.refresh_from_db()
            _write_links_and_tags(note)
            index_note_content(note=note, content=search_text(note))
            _audit(note, actor, "note.update", before=before, after=_snapshot(note))
    except IntegrityError:
        existing = Note.objects.filter(
            project_id=note.project_id, agent_id=note.agent_id, path=fields["path"]
        ).first()
        if existing is None:
            raise
        raise _path_taken(existing) from None
    return note


def note_delete(*, note: Note, actor: str) -> None:
    with transaction.atomic():
        _audit(note, actor, "note.delete", before=_snapshot(note), after=None)
        delete_or_not_found(note, "note")


def note_write(
    *,
    agent: Agent,
    path: str,
    content: str,
    scope: str = NoteScope.PERSONAL,
    title: str | None = None,
    tags: list[str] | None = None,
    version: int | None = None,
    actor: str | None = None,
) -> Note:
    """Write the note at path in the scope: create it, or replace its content.

    version is the version the caller read; without it an existing note is replaced whatever
    its version (a tool that only appends its own notes need not read first), one written by a
    concurrent request included: that request's note is replaced as an earlier one would be,
    where it answered 409 path_taken or stale_version depending on the timing.
    """
    actor = actor or f"agent:{agent.project.slug}/{agent.slug}"
    fields = {"content": content, "scope": scope, "title": title, "tags": tags, "actor": actor}
    if version is not None:
        return _note_write_once(agent=agent, path=path, version=version, **fields)
    for _ in range(WRITE_RETRIES):
        try:
            return _note_write_once(agent=agent, path=path, version=None, **fields)
        except Conflict as conflict:
            if conflict.code not in ("path_taken", "stale_version"):
                raise
    return _note_write_once(agent=agent, path=path, version=None, **fields)


# How often a write without a version reads the note again after another request wrote it
# first: each lost race means that one was stored, so more writers than this at one path at
# the same moment are past what a note is for; the last is answered with the 409.
WRITE_RETRIES = 10


def _note_write_once(*, agent, path, content, scope, title, tags, version, actor) -> Note:
    owner = agent if scope == NoteScope.PERSONAL else None
    existing = note_at_path(project_id=agent.project_id, agent=owner, path=path)
    if existing is None:
        if version not in (None, 0):
            raise Conflict(
                f"No note at {path!r} any more (you read version {version}): re-read it.",
                details={"current_version": 0},
                code="stale_version",
            )
        return note_create(
            agent=agent,
            scope=scope,
            path=path,
            content=content,
            title=title,
            tags=tags,
            actor=actor,
        )
    return note_update(
        note=existing,
        expected_version=existing.version if version is None else version,
        content=content,
        title=title,
        tags=tags,
        actor=actor,
    )


# note_read and note_search live in selectors; named here so a tool layer finds the three tools
# in one module.
__all__ = ["note_create", "note_delete", "note_read", "note_search", "note_update", "note_write"]


def search_text(note: Note) -> str:
    """The text a note is found by: its title, the words of its path, its tags and content.

    The path goes in as words: PostgreSQL's parser reads `infra/kubernetes.md` as one file-name
    token, so `kubernetes` alone would not find it.
    """
    path_words = note.path.removesuffix(SUFFIX).replace("/", " ").replace(".", " ")
    return "\n".join((note.title, path_words, " ".join(note.tags), note.content))


def _checked(*, path: str, content: str, title: str, tags: list[str]) -> dict:
    problem = text_problem(content)
    if problem:
        refuse("content", f"{problem}.")
    return {
        "path": path_check(path),
        "content": content,
        "title": title_check(title),
        "tags": tags_check(tags),
    }


def _write_links_and_tags(note: Note) -> None:
    """Store the links and tags of the note's current content, replacing earlier ones."""
    NoteLink.objects.filter(source=note).delete()
    NoteLink.objects.bulk_create(
        [
            NoteLink(source=note, target_path=target, position=position)
            for position, target in enumerate(links_in(note.content))
        ]
    )
    NoteTag.objects.filter(note=note).delete()
    NoteTag.objects.bulk_create([NoteTag(note=note, tag=tag) for tag in note.tags])


def _path_taken(existing: Note) -> Conflict:
    return Conflict(
        f"path: the {existing.scope} notes already have {existing.path!r} (note {existing.id}); "
        "update that note instead, or choose another path.",
        details={"note_id": str(existing.id)},
        code="path_taken",
    )


def _raise_stale(note: Note, expected_version: int):
    current = Note.objects.filter(pk=note.pk).values_list("version", flat=True).first()
    if current is None:
        raise Conflict("The note was deleted since you read it.", code="deleted")
    raise Conflict(
        f"Note version is {current}, not {expected_version}: re-read the note and apply your "
        "change to the current version.",
        details={"current_version": current},
        code="stale_version",
    )


def _snapshot(note: Note) -> dict:
    return {
        "scope": note.scope,
        "path": note.path,
        "title": note.title,
        "content": note.content,
        "tags": list(note.tags),
        "version": note.version,
    }


def _audit(note: Note, actor: str, action: str, *, before, after) -> None:
    audit_record(
        actor=actor,
        action=action,
        object_type="note",
        object_id=note.id,
        project_id=note.project_id,
        summary=f"{note.scope}:{note.path}",
        before=before,
        after=after,
    )
