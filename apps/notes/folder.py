"""Notes as a folder of markdown files: one `.md` per note, its metadata in YAML front matter.

    DIR/shared/ops/deploy.md          a shared note at path ops/deploy.md
    DIR/personal/ops/deploy.md        the exporting agent's own note at the same path

    ---
    id: 0190…
    scope: shared
    title: Deploy
    tags: [ops]
    version: 3
    ---
    <the note's content, byte for byte>

The path is the file's place under its scope's folder. Content is written and read as UTF-8
bytes with no newline translation, so a round trip gives back the same bytes, and so the same
[[links]].
"""

import uuid
from dataclasses import dataclass
from pathlib import Path

import yaml
from django.db import transaction

from apps.core.errors import ApplicationError
from apps.notes.models import Note, NoteScope
from apps.notes.paths import path_problem
from apps.notes.selectors import note_at_path
from apps.notes.services import note_create, note_update

OPEN = "---\n"
CLOSE = "\n---\n"


class FolderError(Exception):
    """The folder cannot be exported to or imported from; the message names the file."""


def notes_export(*, project, agent=None, folder: Path) -> list[Path]:
    """Write the project's shared notes (and the agent's own, when given) under folder."""
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise FolderError(f"{folder} must be an empty folder or not exist yet.")
    notes = Note.objects.filter(project=project, agent__isnull=True)
    if agent is not None:
        notes = notes | Note.objects.filter(project=project, agent=agent)
    written = []
    for note in notes.order_by("scope", "path"):
        target = folder / note.scope / note.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(_file_bytes(note))
        written.append(target)
    return written


def _file_bytes(note: Note) -> bytes:
    meta = {
        "id": str(note.id),
        "scope": note.scope,
        "title": note.title,
        "tags": list(note.tags),
        "version": note.version,
    }
    front = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=10_000)
    return (OPEN + front + CLOSE.lstrip("\n")).encode() + note.content.encode()


@dataclass(frozen=True)
class NoteFile:
    file: Path
    scope: str
    path: str
    note_id: str
    title: str | None  # None: not in the front matter, so the note's default
    tags: list
    version: int
    content: str


@dataclass(frozen=True)
class ImportResult:
    created: int
    updated: int
    unchanged: int


def notes_import(*, project, agent=None, folder: Path, actor: str) -> ImportResult:
    """Read every `.md` under folder into the project: all files are checked first, then
    written in one transaction, so a bad file leaves the project as it was.

    A note is matched by scope and path: a new one keeps its id (when free) and version, an
    existing one with other content, title or tags is updated to them (its version goes up).
    """
    if not folder.is_dir():
        raise FolderError(f"{folder} is not a folder.")
    files = [_read(file, folder) for file in sorted(folder.rglob("*.md")) if file.is_file()]
    for found in files:
        if found.scope == NoteScope.PERSONAL and agent is None:
            raise FolderError(f"{found.file}: a personal note; name its agent with --agent.")
    created = updated = unchanged = 0
    with transaction.atomic():
        for found in files:
            owner = agent if found.scope == NoteScope.PERSONAL else None
            existing = note_at_path(project_id=project.id, agent=owner, path=found.path)
            try:
                if existing is None:
                    note_create(
                        agent=owner,
                        project=project,
                        scope=found.scope,
                        path=found.path,
                        content=found.content,
                        title=found.title,
                        tags=found.tags,
                        version=found.version,
                        note_id=found.note_id,
                        actor=actor,
                    )
                    created += 1
                    continue
                before = existing.version
                note = note_update(
                    note=existing,
                    expected_version=existing.version,
                    content=found.content,
                    title=found.title,
                    tags=found.tags,
                    actor=actor,
                )
            except ApplicationError as error:
                raise FolderError(f"{found.file}: {error.message}") from None
            if note.version == before:
                unchanged += 1
            else:
                updated += 1
    return ImportResult(created, updated, unchanged)


def _read(file: Path, folder: Path) -> NoteFile:
    relative = file.relative_to(folder).as_posix()
    scope, _, path = relative.partition("/")
    if scope not in NoteScope.values or not path:
        raise FolderError(f"{file}: not under {folder}/shared/ or {folder}/personal/.")
    problem = path_problem(path)
    if problem:
        raise FolderError(f"{file}: the note path {path!r} {problem}.")
    try:
        text = file.read_bytes().decode()
    except UnicodeDecodeError as error:
        raise FolderError(
            f"{file}: not UTF-8 text ({error.reason} at byte {error.start})."
        ) from None
    if not text.startswith(OPEN):
        raise FolderError(f"{file}: does not start with '---' front matter.")
    end = text.find(CLOSE, len(OPEN) - 1)
    if end < 0:
        raise FolderError(f"{file}: the front matter has no closing '---' line.")
    try:
        meta = yaml.safe_load(text[len(OPEN) : end + 1]) or {}
    except yaml.YAMLError as error:
        raise FolderError(f"{file}: the front matter is not YAML: {error}") from None
    return NoteFile(
        file=file,
        scope=_field(file, meta, "scope", str, scope),
        path=path,
        note_id=_note_id(file, meta),
        title=_field(file, meta, "title", str, None) if "title" in meta else None,
        tags=_field(file, meta, "tags", list, []),
        version=_version(file, meta),
        content=text[end + len(CLOSE) :],
    )


def _field(file: Path, meta, name: str, kind: type, default):
    if not isinstance(meta, dict):
        raise FolderError(f"{file}: the front matter must be a mapping of fields.")
    value = meta.get(name, default)
    if not isinstance(value, kind):
        raise FolderError(f"{file}: front matter {name!r} must be a {kind.__name__}.")
    if name == "scope" and value != default:
        raise FolderError(f"{file}: scope {value!r} but the file is under {default}/.")
    return value


def _version(file: Path, meta) -> int:
    version = _field(file, meta, "version", int, 1)
    if isinstance(version, bool) or version < 1:
        raise FolderError(f"{file}: front matter 'version' must be a whole number from 1.")
    return version


def _note_id(file: Path, meta) -> str | None:
    raw = _field(file, meta, "id", str, "")
    if not raw:
        return None
    try:
        return str(uuid.UUID(raw))
    except ValueError:
        raise FolderError(f"{file}: front matter 'id' {raw!r} is not a UUID.") from None
