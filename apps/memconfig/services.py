"""Change memory config overrides; every change is versioned with who, when, before and after."""

from django.conf import settings
from django.db import IntegrityError, transaction

from apps.audit.services import audit_record
from apps.core.errors import ApplicationError, Conflict
from apps.memconfig.hooks import embedder_changed
from apps.memconfig.models import MemoryConfig, MemoryConfigVersion
from apps.memconfig.schema import BY_KEY
from apps.providers.local_embedder import local_embedder_problem
from apps.tenancy.models import Agent, Project


def config_validate(changes: dict, *, agent_level: bool = False) -> dict:
    """Return changes with values coerced to their types; None means 'inherit' (remove)."""
    errors, clean = {}, {}
    for key, value in changes.items():
        setting = BY_KEY.get(key)
        if setting is None:
            errors[key] = "unknown setting"
            continue
        if agent_level and setting.project_only:
            errors[key] = "is set per project (all agents of a project share one index)"
            continue
        if value is None:
            clean[key] = None
            continue
        try:
            clean[key] = setting.parse(value)
        except ValueError as exc:
            errors[key] = str(exc)
    if errors:
        first = next(iter(errors))
        raise ApplicationError(f"{first}: {errors[first]}", details=errors)
    return clean


def config_update(
    *,
    changes: dict,
    changed_by: str,
    project: Project | None = None,
    agent: Agent | None = None,
    expected_version: int | None = None,
    note: str = "",
) -> MemoryConfig:
    """Apply changes at the agent level (agent given) or the project level, and record them."""
    clean = config_validate(changes, agent_level=agent is not None)
    with transaction.atomic():
        config = _config_for_update(project=project, agent=agent)
        if expected_version is not None and config.version != expected_version:
            raise Conflict(
                f"Config is at version {config.version}, not {expected_version}; reload it.",
                details={"current_version": config.version},
                code="stale_version",
            )
        before = dict(config.values)
        after = {**before, **{k: v for k, v in clean.items() if v is not None}}
        for key in [k for k, v in clean.items() if v is None]:
            after.pop(key, None)
        if after == before:
            return config
        _check_embedder(after)
        config.values = after
        config.version += 1
        config.save(update_fields=["values", "version", "updated_at"])
        MemoryConfigVersion.objects.create(
            config=config,
            version=config.version,
            changed_by=changed_by,
            before=before,
            after=after,
            note=note,
        )
        audit_record(
            actor=changed_by,
            action="config.update",
            object_type="memory_config",
            object_id=config.id,
            project_id=config.project_id or (agent.project_id if agent else None),
            summary=f"{config.level} {agent or project} v{config.version}"
            + (f" ({note})" if note else ""),
            before=before,
            after=after,
        )
        if any(BY_KEY[key].project_only for key in clean):
            embedder_changed.send(sender=MemoryConfig, project_id=config.project_id)
    return config


def _check_embedder(values: dict) -> None:
    """Refuse a local embedder this server has not, or with other dimensions than its model's."""
    model = values.get("embedder_model", settings.MEMORY_DEFAULTS["embedder_model"])
    dims = values.get("embedder_dimensions", settings.MEMORY_DEFAULTS["embedder_dimensions"])
    if (problem := local_embedder_problem(model, dims)) is not None:
        name, message = problem
        raise ApplicationError(f"{name}: {message}", details={name: message})


def config_rollback(*, config: MemoryConfig, to_version: int, changed_by: str) -> MemoryConfig:
    """Restore the values a level had at to_version (0 = before any change) as a new version."""
    if to_version == 0:
        values = {}
    else:
        target = config.versions.filter(version=to_version).first()
        if target is None:
            raise ApplicationError(f"Version {to_version} does not exist for this config.")
        values = target.after
    changes = {key: values.get(key) for key in set(config.values) | set(values)}
    return config_update(
        changes=changes,
        changed_by=changed_by,
        project=None if config.agent_id else config.project,
        agent=config.agent,
        note=f"rollback to v{to_version}",
    )


def _config_for_update(*, project: Project | None, agent: Agent | None) -> MemoryConfig:
    lookup = {"agent": agent} if agent is not None else {"project": project, "agent": None}
    if agent is None and project is None:
        raise ApplicationError("Name a project or an agent; the default level is read-only.")
    config = MemoryConfig.objects.select_for_update().filter(**lookup).first()
    if config is not None:
        return config
    try:
        with transaction.atomic():
            return MemoryConfig.objects.create(**lookup)
    except IntegrityError:
        return MemoryConfig.objects.select_for_update().get(**lookup)
