"""Resolve the effective memory config of an agent: defaults ← project ← agent."""

import os
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.cache import caches
from django.db import transaction
from django.db.models import Q
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from apps.memconfig.models import ConfigLevel, MemoryConfig, MemoryConfigVersion
from apps.memconfig.schema import SETTINGS, Setting
from apps.tenancy.models import Agent, Project


@dataclass(frozen=True)
class EffectiveConfig:
    values: dict[str, Any]
    sources: dict[str, str]  # key → the level its value comes from

    def __getitem__(self, key: str) -> Any:
        return self.values[key]


def config_level_get(*, project: Project | None = None, agent: Agent | None = None):
    """Return the stored override row of one level, or None when nothing was ever set there."""
    if agent is not None:
        return MemoryConfig.objects.filter(agent=agent).first()
    return MemoryConfig.objects.filter(project=project, agent__isnull=True).first()


def config_effective(*, agent: Agent) -> EffectiveConfig:
    """The agent's settings: its own level over its project's, over the defaults.

    Many API requests ask for it, so it is kept in the per-process "hot" cache
    (settings.HOT_CACHE_SECONDS); a config change forgets it.
    """
    cache_key = f"memory-config:{agent.pk}"
    config = caches["hot"].get(cache_key)
    if config is None:
        rows = MemoryConfig.objects.filter(
            Q(agent_id=agent.pk) | Q(project_id=agent.project_id, agent__isnull=True)
        ).values_list("agent_id", "values")
        config = _resolve(
            {
                (ConfigLevel.AGENT if agent_id else ConfigLevel.PROJECT).value: values
                for agent_id, values in rows
            }
        )
        caches["hot"].set(cache_key, config)
    return config


@receiver([post_save, post_delete], sender=MemoryConfig)
def _forget_configs(sender, instance, **kwargs):
    # A project level is inherited by all its agents: forget this process's cached rows.
    caches["hot"].clear()
    transaction.on_commit(caches["hot"].clear)  # a read in between may have cached the old row


def config_effective_for_project(*, project_id) -> EffectiveConfig:
    """The project level resolved over the defaults: what project-wide work (indexes) uses.

    Every append asks it (to keep the project's vectors in step), so it is kept in the "hot"
    cache like config_effective(); a config change forgets it.
    """
    cache_key = f"memory-config-project:{project_id}"
    config = caches["hot"].get(cache_key)
    if config is None:
        rows = MemoryConfig.objects.filter(project_id=project_id, agent__isnull=True)
        config = _resolve({row.level: row.values for row in rows})
        caches["hot"].set(cache_key, config)
    return config


def _resolve(by_level: dict[str, dict]) -> EffectiveConfig:
    values, sources = {}, {}
    for setting in SETTINGS:
        values[setting.key] = settings.MEMORY_DEFAULTS[setting.key]
        sources[setting.key] = ConfigLevel.DEFAULT.value
        for level in (ConfigLevel.PROJECT, ConfigLevel.AGENT):
            overrides = by_level.get(level.value, {})
            if setting.key in overrides:
                values[setting.key] = overrides[setting.key]
                sources[setting.key] = level.value
    return EffectiveConfig(values=values, sources=sources)


def config_history(*, config: MemoryConfig):
    return config.versions.all()


@dataclass(frozen=True)
class DefaultValue:
    setting: Setting
    value: Any
    from_env: bool  # the environment sets it, rather than the built-in default


def config_defaults() -> list[DefaultValue]:
    """The global level: each setting's default and whether its MEMORY_<KEY> variable sets it."""
    rows = []
    for setting in SETTINGS:
        raw = os.environ.get(setting.env_var)
        from_env = raw is not None and (raw != "" or setting.type is str)
        rows.append(DefaultValue(setting, settings.MEMORY_DEFAULTS[setting.key], from_env))
    return rows


def config_inherited(*, agent: Agent | None = None) -> EffectiveConfig:
    """What a level inherits: the project's effective values for an agent, else the defaults."""
    if agent is not None:
        return config_effective_for_project(project_id=agent.project_id)
    return _resolve({})


@dataclass(frozen=True)
class ConfigChange:
    key: str
    before: Any
    after: Any
    before_set: bool  # False: the key was inherited before this version
    after_set: bool


def config_version_changes(*, version: MemoryConfigVersion) -> list[ConfigChange]:
    """The keys one version changed, in the schema's order, with their values before and after."""
    order = {setting.key: index for index, setting in enumerate(SETTINGS)}
    keys = sorted(
        {
            key
            for key in version.before.keys() | version.after.keys()
            if version.before.get(key, _MISSING) != version.after.get(key, _MISSING)
        },
        key=lambda key: (order.get(key, len(order)), key),
    )
    return [
        ConfigChange(
            key=key,
            before=version.before.get(key),
            after=version.after.get(key),
            before_set=key in version.before,
            after_set=key in version.after,
        )
        for key in keys
    ]


_MISSING = object()


def config_level_versions(*, project: Project | None = None, agent: Agent | None = None):
    """The versions of one level (project, or agent when given), newest first; none if unset."""
    config = config_level_get(project=project, agent=agent)
    if config is None:
        return MemoryConfigVersion.objects.none()
    return config_history(config=config)
