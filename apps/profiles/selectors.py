"""Reads of user profiles and session memory, always within one agent's scope."""

from __future__ import annotations

from typing import TYPE_CHECKING

from apps.core.errors import NotFound
from apps.profiles.models import SessionMemory, UserProfile
from apps.tenancy.selectors import resource_find

if TYPE_CHECKING:  # other areas' models only as types: their rows come through their selectors
    from apps.tenancy.models import Agent, Resource
    from apps.threads.models import Thread


def profile_get(*, agent: Agent, resource: Resource) -> UserProfile | None:
    return UserProfile.objects.filter(agent=agent, resource=resource).first()


def session_memory_get(*, thread: Thread) -> SessionMemory | None:
    """Return the thread's session memory, or None before the first write.

    Read through the thread's relation: a thread selected with it (thread_get's related) holds it
    already, and the context of every model call reads it.
    """
    try:
        return thread.session_memory
    except SessionMemory.DoesNotExist:
        return None


def profile_of_resource(
    *, agent: Agent, resource_external_id: str
) -> tuple[Resource, UserProfile | None]:
    """Return the project's end user with this id and the agent's profile of it (None if unwritten).

    End users are the project's; the profile is the agent's own, so another agent of the project
    reads its own (perhaps empty) profile of the same end user.
    """
    resource = resource_find(project=agent.project, external_id=resource_external_id)
    if resource is None:
        raise NotFound(f"No resource {resource_external_id!r} in this project.")
    return resource, profile_get(agent=agent, resource=resource)
