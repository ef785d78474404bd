"""What the project-admin endpoints share: who may call them, how the audit log names the
caller, and which level of the caller's project a request means."""

from dataclasses import dataclass

from rest_framework import serializers

from apps.api.v1.common import principal
from apps.core.errors import NotFound
from apps.tenancy.auth import IsProjectAdmin
from apps.tenancy.models import Agent, Project
from apps.tenancy.selectors import agent_list

ADMIN_PERMISSIONS = [IsProjectAdmin]
LEVELS = ["project", "agent"]


def admin_actor(request) -> str:
    """How the audit log names an admin key's change: admin-key:<project>/<agent> mc_<prefix>_…."""
    key = principal(request).api_key
    return f"admin-key:{key.agent.project.slug}/{key.agent.slug} mc_{key.prefix}_…"


@dataclass(frozen=True)
class Level:
    project: Project
    agent: Agent | None  # None: the project level

    @property
    def name(self) -> str:
        return "agent" if self.agent else "project"


class LevelSerializer(serializers.Serializer):
    """The level a request names: the caller's project, or one agent of it."""

    level = serializers.ChoiceField(
        choices=LEVELS,
        help_text="project: the settings every agent of the key's project inherits; agent: "
        "one agent's own overrides.",
    )
    agent = serializers.SlugField(
        max_length=64,
        required=False,
        help_text="With level=agent: the agent's slug in the key's project (default: the key's "
        "own agent).",
    )

    def validate(self, attrs):
        if attrs["level"] == "project" and attrs.get("agent"):
            raise serializers.ValidationError(
                {"agent": ["Only with level=agent; leave it out for the project level."]}
            )
        return attrs


def level_of(request, data: dict) -> Level:
    """Return the level named by validated LevelSerializer data, within the caller's project."""
    caller = principal(request)
    if data["level"] == "project":
        return Level(project=caller.project, agent=None)
    slug = data.get("agent") or caller.agent.slug
    agent = agent_list(project=caller.project).filter(slug=slug).first()
    if agent is None:
        raise NotFound(
            f"agent: no agent {slug!r} in project {caller.project.slug}.",
            details={"agent": [f"No agent {slug!r} in this project."]},
        )
    return Level(project=caller.project, agent=agent)
