"""Reads of notes, always within what one agent may see: its personal notes and its project's
shared notes. Everything else answers 404, like another agent's object."""

import uuid
from collections.abc import Callable
from dataclasses import dataclass

from django.db.models import Q, QuerySet

from apps.core.errors import ApplicationError, NotFound
from apps.core.text import name_normalise
from apps.notes.markdown import markdown_html
from apps.notes.models import Note, NoteLink
from apps.search.models import ItemKind
from apps.search.selectors import Hit, search_for_agent, similarity_floor
from apps.tenancy.models import Agent


def _visible_to(agent: Agent) -> Q:
    return Q(project_id=agent.project_id) & (Q(agent=agent) | Q(agent__isnull=True))


def note_list(
    *,
    agent: Agent,
    scope: str | None = None,
    tag: str | None = None,
    path_prefix: str | None = None,
) -> QuerySet[Note]:
    """The notes the agent sees, narrowed by scope, tag and the start of their path."""
    notes = Note.objects.filter(_visible_to(agent))
    if scope is not None:
        notes = notes.filter(scope=scope)
    if tag is not None:
        notes = notes.filter(tag_rows__tag=tag)
    if path_prefix:
        notes = notes.filter(path__startswith=name_normalise(path_prefix))
    return notes


def note_get(*, agent: Agent, note_id: uuid.UUID) -> Note:
    note = Note.objects.filter(_visible_to(agent), pk=note_id).first()
    if note is None:
        raise NotFound("No such note.")
    return note


def note_read(*, agent: Agent, path: str, scope: str | None = None) -> Note:
    """Return the note at path that the agent sees: its own first, else the project's shared
    one (the way its links resolve); scope picks one of the two."""
    notes = Note.objects.filter(_visible_to(agent), path=name_normalise(path))
    if scope is not None:
        notes = notes.filter(scope=scope)
    # Personal before shared: "personal" sorts first.
    note = notes.order_by("scope").first()
    if note is None:
        raise NotFound(f"No note at path {path!r}.")
    return note


def note_at_path(*, project_id, agent: Agent | None, path: str) -> Note | None:
    """Return the note at path of an agent's personal notes, or of the shared ones (None)."""
    owner = {"agent": agent} if agent is not None else {"agent__isnull": True}
    return Note.objects.filter(project_id=project_id, path=name_normalise(path), **owner).first()


@dataclass(frozen=True)
class Link:
    """A wikilink of a note: the path it names and the note it reaches (None: missing)."""

    path: str
    note: Note | None

    @property
    def missing(self) -> bool:
        return self.note is None


def note_links(*, note: Note) -> list[Link]:
    """Return the note's links, each resolved as its owner sees them.

    A personal note's link reaches its agent's own note at that path, else the shared one; a
    shared note's link reaches shared notes only, since every agent of the project reads it.
    """
    paths = list(note.links.order_by("position").values_list("target_path", flat=True))
    targets = Note.objects.filter(project_id=note.project_id, path__in=paths)
    if note.agent_id is None:
        targets = targets.filter(agent__isnull=True)
    else:
        targets = targets.filter(Q(agent_id=note.agent_id) | Q(agent__isnull=True))
    by_path: dict[str, Note] = {}
    for target in targets.order_by("scope"):  # personal first, so it wins
        by_path.setdefault(target.path, target)
    return [Link(path, by_path.get(path)) for path in paths]


def note_backlinks(*, note: Note, viewer: Agent | None = None) -> list[Note]:
    """Return the notes whose links reach this one, as `viewer` may see them.

    A shared note is reached from shared notes and from personal notes whose agent has no note
    of its own at the path; a personal note only from its agent's notes. viewer None (an
    operator) sees every agent's; otherwise other agents' personal notes stay hidden.
    """
    sources = Note.objects.filter(
        project_id=note.project_id,
        pk__in=NoteLink.objects.filter(target_path=note.path).values("source_id"),
    ).exclude(pk=note.pk)
    if note.agent_id is not None:
        sources = sources.filter(agent_id=note.agent_id)
    else:
        shadowed = Note.objects.filter(
            project_id=note.project_id, path=note.path, agent__isnull=False
        ).values("agent_id")
        sources = sources.filter(Q(agent__isnull=True) | ~Q(agent_id__in=shadowed))
    if viewer is not None:
        sources = sources.filter(Q(agent__isnull=True) | Q(agent=viewer))
    return list(sources.order_by("path", "scope"))


def note_html(*, note: Note, url: Callable[[Note], str]) -> str:
    """Return the note's markdown as sanitised HTML; url(target) is where a link leads."""
    reached = {link.path: link.note for link in note_links(note=note)}
    return markdown_html(
        note.content, href=lambda path: url(reached[path]) if reached.get(path) else None
    )


@dataclass(frozen=True)
class FoundNote:
    note: Note
    score: float
    signals: dict


def note_search(*, agent: Agent, query: str, top_k: int = 5) -> list[FoundNote]:
    """Return the agent's and its project's shared notes ranked for the query (the tool), above
    the agent's similarity floor, as POST /search and the context's notes block have them."""
    if not query.strip():
        raise ApplicationError("query: must not be blank.")
    found = search_for_agent(
        agent=agent,
        query=query,
        kinds=[ItemKind.NOTE],
        top_k=top_k,
        floor=similarity_floor(agent=agent, value=None),
    )
    return notes_of_hits(found.hits)


def notes_of_hits(hits: list[Hit]) -> list[FoundNote]:
    notes = Note.objects.in_bulk([hit.id for hit in hits if hit.type == "note"])
    return [FoundNote(notes[h.id], h.score, h.signals) for h in hits if h.id in notes]


# --- The console: every project's notes, for operators ------------------------------------------


def note_browse(*, project_id, agent_id=None, shared: bool = True) -> QuerySet[Note]:
    """A project's shared notes (shared=True) or one agent's personal notes, by path."""
    notes = Note.objects.filter(project_id=project_id).order_by("path")
    if shared:
        return notes.filter(agent__isnull=True)
    return notes.filter(agent_id=agent_id)


def note_for_operator(*, note_id: uuid.UUID) -> Note:
    note = Note.objects.select_related("project", "agent").filter(pk=note_id).first()
    if note is None:
        raise NotFound("No such note: it may have been deleted.")
    return note
