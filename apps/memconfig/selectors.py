"""Resolve the effective memory config of an agent: defaults ← project ← agent."""

import json
import os
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import connection

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

    Read through a plain cursor: the API asks for it on many requests, and compiling the ORM's
    statement cost three times what running it does.
    """
    agent_field, project_field = (MemoryConfig._meta.get_field(n) for n in ("agent", "project"))
    column = connection.ops.quote_name(_VALUES_COLUMN)  # VALUES is a keyword in SQL
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT agent_id, {column} FROM {MemoryConfig._meta.db_table} "
            "WHERE agent_id = %s OR (project_id = %s AND agent_id IS NULL)",
            [
                agent_field.get_db_prep_value(agent.pk, connection),
                project_field.get_db_prep_value(agent.project_id, connection),
            ],
        )
        rows = cursor.fetchall()
    by_level = {}
    for agent_id, values in rows:
        level = ConfigLevel.AGENT if agent_id is not None else ConfigLevel.PROJECT
        by_level[level.value] = json.loads(values) if isinstance(values, str | bytes) else values
    return _resolve(by_level)


_VALUES_COLUMN = MemoryConfig._meta.get_field("values").column


def config_effective_for_project(*, project_id) -> EffectiveConfig:
    """The project level resolved over the defaults: what project-wide work (indexes) uses."""
    rows = MemoryConfig.objects.filter(project_id=project_id, agent__isnull=True)
    return _resolve({row.level: row.values for row in rows})


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
