"""What an MCP client may read as resources: the agent's notes and a thread's observations.

notes://personal/<path> and notes://shared/<path> are the notes the agent sees;
threads://<thread_id>/observations is a thread's active observations, oldest first. Another
agent's thread or personal note is not found, like everywhere else.
"""

import uuid
from dataclasses import dataclass

from apps.core.errors import NotFound
from apps.notes.selectors import note_list, note_read
from apps.observations.selectors import observation_list
from apps.tenancy.models import Agent
from apps.threads.selectors import thread_get

LISTED_NOTES_MAX = 200  # a listing is for browsing; note_search finds the rest
OBSERVATIONS_TEMPLATE = "threads://{thread_id}/observations"


@dataclass(frozen=True)
class Resource:
    uri: str
    name: str
    mime_type: str
    text: str = ""


def resource_list(*, agent: Agent) -> list[Resource]:
    """The notes the agent sees, most recently changed first."""
    notes = note_list(agent=agent).order_by("-updated_at")[:LISTED_NOTES_MAX]
    return [
        Resource(f"notes://{note.scope}/{note.path}", note.title or note.path, "text/markdown")
        for note in notes
    ]


def resource_read(*, agent: Agent, uri: str) -> Resource:
    """Return the resource at uri with its text; NotFound names the URIs that exist."""
    scheme, _, rest = uri.partition("://")
    if scheme == "notes":
        scope, _, path = rest.partition("/")
        if scope in ("personal", "shared") and path:
            note = note_read(agent=agent, path=path, scope=scope)
            return Resource(uri, note.title or note.path, "text/markdown", note.content)
    if scheme == "threads":
        thread_id, _, what = rest.partition("/")
        if what == "observations":
            try:
                thread = thread_get(agent=agent, thread_id=uuid.UUID(thread_id))
            except ValueError:
                raise NotFound(f"{thread_id!r} is not a thread id.") from None
            observations = observation_list(thread=thread, status="active").order_by(
                "first_seq", "created_at"
            )
            text = "\n\n".join(observation.content for observation in observations)
            return Resource(uri, f"Observations of thread {thread.id}", "text/plain", text)
    raise NotFound(
        f"No resource {uri!r}: read notes://personal/<path>, notes://shared/<path> or "
        f"{OBSERVATIONS_TEMPLATE}."
    )
