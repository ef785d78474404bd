"""The notes tools: a model keeps markdown notes, personal or shared with its project.

Thin calls into apps.notes (note_write / note_read / note_search), which check paths, versions
and visibility and audit every write, exactly as for the notes REST API.
"""

from typing import Literal

from pydantic import Field

from apps.agenttools.arguments import Arguments, Integer, Text
from apps.agenttools.registry import Caller, tool
from apps.notes import services as note_services
from apps.notes.models import Note

PATH_HELP = "The note's path: relative, ending in .md, e.g. 'ops/deploy.md'."


def note_answer(note: Note) -> dict:
    fields = ("id", "scope", "path", "title", "content", "tags", "version", "updated_at")
    return {name: getattr(note, name) for name in fields}


class NoteRead(Arguments):
    path: Text = Field(min_length=1, max_length=255, description=PATH_HELP)
    scope: Literal["personal", "shared"] | None = Field(
        None, description="Which notes; default: your own note at the path, else the shared one."
    )


@tool(name="note_read", arguments=NoteRead)
def note_read(caller: Caller, args: NoteRead) -> dict:
    """Read one of your notes, or one your project shares, by its path; the answer has its
    version, to pass to note_write when you change it."""
    return note_answer(
        note_services.note_read(agent=caller.agent, path=args.path, scope=args.scope)
    )


class NoteWrite(Arguments):
    path: Text = Field(min_length=1, max_length=255, description=PATH_HELP)
    content: Text = Field(description="The whole note, in markdown; [[other/path]] links a note.")
    scope: Literal["personal", "shared"] = Field(
        "personal", description="personal: only you read it; shared: every agent of the project."
    )
    title: Text | None = Field(None, max_length=300, description="Default: its first heading.")
    tags: list[Text] | None = Field(None, max_length=32, description="Tags to find it by.")
    version: Integer | None = Field(
        None,
        ge=0,
        le=2_147_483_647,
        description="The version you read (0: you expect no note yet); leave it out to "
        "overwrite whatever is there.",
    )


@tool(name="note_write", arguments=NoteWrite, writes=True)
def note_write(caller: Caller, args: NoteWrite) -> dict:
    """Write a note at a path: create it or replace its content. Pass the version you read and
    a change made since is refused with the current version: read again and reapply."""
    note = note_services.note_write(
        agent=caller.agent,
        path=args.path,
        content=args.content,
        scope=args.scope,
        title=args.title,
        tags=args.tags,
        version=args.version,
        actor=caller.actor,
    )
    return note_answer(note)


class NoteSearch(Arguments):
    query: Text = Field(min_length=1, max_length=2000)
    top_k: Integer = Field(5, ge=1, le=50)


@tool(name="note_search", arguments=NoteSearch)
def note_search(caller: Caller, args: NoteSearch) -> dict:
    """Find your notes and your project's shared notes by words and meaning, best first."""
    found = note_services.note_search(agent=caller.agent, query=args.query, top_k=args.top_k)
    return {
        "results": [{**note_answer(item.note), "score": round(item.score, 6)} for item in found]
    }
