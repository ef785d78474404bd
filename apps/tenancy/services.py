"""Writes for projects, agents, keys and resources."""

from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.audit.services import audit_record
from apps.tenancy.keys import key_generate
from apps.tenancy.models import Agent, ApiKey, KeyScope, Project, Resource
from apps.tenancy.selectors import api_key_forget, resource_id_clean


@dataclass(frozen=True)
class IssuedKey:
    api_key: ApiKey
    secret: str  # the full key; shown once, never stored


def project_get_or_create(*, slug: str, name: str = "") -> tuple[Project, bool]:
    return Project.objects.get_or_create(slug=slug, defaults={"name": name or slug})


def agent_get_or_create(*, project: Project, slug: str, name: str = "") -> tuple[Agent, bool]:
    return Agent.objects.get_or_create(project=project, slug=slug, defaults={"name": name or slug})


def api_key_issue(
    *, agent: Agent, name: str = "", actor: str = "system", scope: str = KeyScope.AGENT
) -> IssuedKey:
    """Create a key for the agent; the returned secret is the only copy of the full key.

    scope "admin" makes a project-admin key: the agent's rights, and its project's memory
    settings and action webhooks besides.
    """
    secret, prefix, digest = key_generate()
    api_key = ApiKey.objects.create(
        agent=agent, name=name, prefix=prefix, key_hash=digest, scope=KeyScope(scope)
    )
    _audit_key(api_key, actor, "key.create", before=None, after=_key_snapshot(api_key))
    return IssuedKey(api_key=api_key, secret=secret)


def api_key_revoke(*, api_key: ApiKey, actor: str = "system") -> ApiKey:
    revoked = ApiKey.objects.filter(pk=api_key.pk, revoked_at__isnull=True).update(
        revoked_at=timezone.now()
    )
    api_key_forget(prefix=api_key.prefix)  # update() sends no signal to forget it by
    before = _key_snapshot(api_key)
    api_key.refresh_from_db()
    if revoked:
        _audit_key(api_key, actor, "key.revoke", before=before, after=_key_snapshot(api_key))
    return api_key


def _audit_key(api_key: ApiKey, actor: str, action: str, *, before, after) -> None:
    audit_record(
        actor=actor,
        action=action,
        object_type="api_key",
        object_id=api_key.id,
        project_id=api_key.agent.project_id,
        summary=f"mc_{api_key.prefix}_… of {api_key.agent}",
        before=before,
        after=after,
    )


def _key_snapshot(api_key: ApiKey) -> dict:
    """What the audit log keeps of a key: never its secret or hash."""
    return {
        "key": f"mc_{api_key.prefix}_…",
        "name": api_key.name,
        "agent": str(api_key.agent),
        "scope": api_key.scope,
        "revoked_at": api_key.revoked_at.isoformat() if api_key.revoked_at else None,
    }


def resource_get_or_create(*, project: Project, external_id: str) -> Resource:
    """Return the project's resource with this id, creating it; safe under concurrent calls.

    The id is taken in NFC, and refused with control or bidirectional control characters.
    """
    external_id = resource_id_clean(external_id)
    try:
        return Resource.objects.get(project=project, external_id=external_id)
    except Resource.DoesNotExist:
        pass
    try:
        with transaction.atomic():
            return Resource.objects.create(project=project, external_id=external_id)
    except IntegrityError:
        return Resource.objects.get(project=project, external_id=external_id)
