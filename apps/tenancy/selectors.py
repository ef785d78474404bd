"""Reads for projects, agents, keys and resources."""

import logging
from datetime import timedelta

from django.conf import settings
from django.core.cache import caches
from django.db import OperationalError, transaction
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver
from django.utils import timezone

from apps.core.database_errors import database_busy
from apps.core.text import name_normalise, name_problem
from apps.tenancy.keys import key_matches, key_prefix
from apps.tenancy.models import Agent, ApiKey, Project, Resource

logger = logging.getLogger(__name__)


class KeyRejected(Exception):
    """The presented key is unusable; the message says why."""


def api_key_authenticate(key: str) -> ApiKey:
    """Return the active key row for a presented key, with its agent and project.

    Every API request asks this, so the row is kept in the per-process "hot" cache
    (settings.HOT_CACHE_SECONDS); revoking a key, or changing its agent or project, forgets it.
    """
    prefix = key_prefix(key)
    if prefix is None:
        raise KeyRejected("Malformed API key: expected 'mc_<prefix>_<secret>'.")
    cache_key = _cache_key(prefix)
    api_key = caches["hot"].get(cache_key)
    if api_key is None:
        api_key = ApiKey.objects.select_related("agent__project").filter(prefix=prefix).first()
        if api_key is not None:
            caches["hot"].set(cache_key, api_key)
    if api_key is None or not key_matches(key, api_key.key_hash):
        raise KeyRejected("Unknown API key.")
    if api_key.revoked_at is not None:
        raise KeyRejected("This API key has been revoked.")
    if _touch(api_key):
        caches["hot"].set(cache_key, api_key)
    return api_key


def api_key_forget(*, prefix: str) -> None:
    """Drop a key from this process's cache (its row changed without a model signal)."""
    caches["hot"].delete(_cache_key(prefix))


def _cache_key(prefix: str) -> str:
    return f"api-key:{prefix}"


@receiver([post_save, post_delete], sender=ApiKey)
@receiver([post_save, post_delete], sender=Agent)
@receiver([post_save, post_delete], sender=Project)
def _forget_keys(sender, instance, **kwargs):
    # Rare writes: forgetting everything of this process is simpler than finding the keys.
    caches["hot"].clear()
    transaction.on_commit(caches["hot"].clear)  # a read in between may have cached the old row


def _touch(api_key: ApiKey) -> bool:
    """Record use, at most once per API_KEY_TOUCH_SECONDS so reads do not become writes.

    The time is bookkeeping: when SQLite's write lock stays taken past the busy timeout, the
    request goes on without it (a read must not fail for it) and a later request records it.
    """
    now = timezone.now()
    stale_before = now - timedelta(seconds=settings.API_KEY_TOUCH_SECONDS)
    if api_key.last_used_at is None or api_key.last_used_at < stale_before:
        try:
            with transaction.atomic():
                ApiKey.objects.filter(pk=api_key.pk).update(last_used_at=now)
        except OperationalError as error:
            if not database_busy(error):
                raise
            logger.warning("last use of API key %s not recorded: %s", api_key.prefix, error)
            return False
        api_key.last_used_at = now
        return True
    return False


def resource_id_form(external_id: str) -> str:
    """Return an end user's id as it is stored: in NFC, without surrounding whitespace.

    Request bodies lose it already (DRF trims text fields), while paths and query parameters
    kept it: PUT /resources/%20bob%20/profile made a second end user " bob " that no body
    could name, and ?resource_id=%20ann%20 listed nothing of ann.
    """
    return name_normalise(external_id.strip())


def resource_id_clean(external_id: str) -> str:
    """Return an end user's id as it is stored (resource_id_form), or refuse it (400 naming
    resource_id) when it is blank or holds a control or bidirectional control character.

    One end user is one id however its letters were composed, so forgetting them misses none
    of their rows; reads take it as writes do, so an id no write can store is a 400 for both.
    """
    # Imported here: apps.core.errors loads DRF's views, whose settings load this app's
    # authentication class, which imports this module.
    from apps.core.errors import ApplicationError

    cleaned = resource_id_form(external_id)
    problem = name_problem(cleaned) if cleaned else "is blank; send the end user's id"
    if problem:
        message = f"{(cleaned or external_id)!r} {problem}."
        raise ApplicationError(f"resource_id: {message}", details={"resource_id": [message]})
    return cleaned


def resource_find(*, project: Project, external_id: str) -> Resource | None:
    """Return the project's end user with this id, taken as resource_get_or_create stores it
    (resource_id_clean, so a blank id is a 400), or None."""
    external_id = resource_id_clean(external_id)
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
    keys = ApiKey.objects.select_related("agent__project").order_by("-created_at", "-id")
    if project is not None:
        keys = keys.filter(agent__project=project)
    if agent is not None:
        keys = keys.filter(agent=agent)
    if active is not None:
        keys = keys.filter(revoked_at__isnull=active)
    return keys


def api_key_get(*, key_id) -> ApiKey | None:
    return ApiKey.objects.select_related("agent__project").filter(pk=key_id).first()
