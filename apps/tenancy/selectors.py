"""Reads for projects, agents, keys and resources."""

from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from apps.core.rows import Reader, attnames, instance
from apps.tenancy.keys import key_matches, key_prefix
from apps.tenancy.models import Agent, ApiKey, Project, Resource


class KeyRejected(Exception):
    """The presented key is unusable; the message says why."""


def api_key_authenticate(key: str) -> ApiKey:
    """Return the active key row for a presented key, or raise KeyRejected."""
    prefix = key_prefix(key)
    if prefix is None:
        raise KeyRejected("Malformed API key: expected 'mc_<prefix>_<secret>'.")
    rows = _KEYS.fetch("t0.prefix = %s", [prefix])  # prefix is unique
    row = rows[0] if rows else None
    if row is None or not key_matches(key, row["key_hash"]):
        raise KeyRejected("Unknown API key.")
    api_key = instance(ApiKey, row)
    api_key.agent = instance(Agent, row, "agent__")
    api_key.agent.project = instance(Project, row, "agent__project__")
    if api_key.revoked_at is not None:
        raise KeyRejected("This API key has been revoked.")
    _touch(api_key)
    return api_key


# A key with its agent and project: every API request reads one (see apps/core/rows.py).
_KEYS = Reader(
    ApiKey, attnames(ApiKey) + attnames(Agent, "agent__") + attnames(Project, "agent__project__")
)


def _touch(api_key: ApiKey) -> None:
    """Record use, at most once per API_KEY_TOUCH_SECONDS so reads do not become writes."""
    now = timezone.now()
    stale_before = now - timedelta(seconds=settings.API_KEY_TOUCH_SECONDS)
    if api_key.last_used_at is None or api_key.last_used_at < stale_before:
        ApiKey.objects.filter(pk=api_key.pk).update(last_used_at=now)
        api_key.last_used_at = now


def resource_find(*, project: Project, external_id: str) -> Resource | None:
    return Resource.objects.filter(project=project, external_id=external_id).first()


def tenancy_counts() -> dict:
    return {"projects": Project.objects.count(), "agents": Agent.objects.count()}


def project_list():
    return Project.objects.all()


def agent_list(*, project: Project | None = None):
    agents = Agent.objects.select_related("project")
    return agents.filter(project=project) if project else agents


def api_key_list(*, project: Project | None = None, agent=None, active: bool | None = None):
    """Keys newest first with their agent and project; active=False gives the revoked ones."""
    keys = ApiKey.objects.select_related("agent__project")
    if project is not None:
        keys = keys.filter(agent__project=project)
    if agent is not None:
        keys = keys.filter(agent=agent)
    if active is not None:
        keys = keys.filter(revoked_at__isnull=active)
    return keys


def api_key_get(*, key_id) -> ApiKey | None:
    return ApiKey.objects.select_related("agent__project").filter(pk=key_id).first()
