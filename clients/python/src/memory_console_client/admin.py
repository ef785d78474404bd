"""The project-admin parts of the client: memory settings and action webhooks.

They need a project-admin key (manage.py create_agent --admin); an agent key gets
PermissionDenied (403) from every call here except Config.get.
"""

from __future__ import annotations  # the classes' list() methods shadow list[...]

from collections.abc import Iterator
from typing import Any

from memory_console_client.operations import OPERATIONS as OPS
from memory_console_client.transport import Transport
from memory_console_client.types import ConfigLevel, ConfigVersion, EffectiveConfig, Webhook


def _level(level: str, agent: str | None) -> dict[str, Any]:
    return {"level": level, **({"agent": agent} if agent else {})}


class Config:
    def __init__(self, transport: Transport):
        self._t = transport

    def get(self) -> EffectiveConfig:
        """The calling agent's effective settings, with the level each comes from (any key)."""
        return self._t.call(OPS["config_read"])

    def level(self, level: str = "project", *, agent: str | None = None) -> ConfigLevel:
        """A level's overrides and version: level "project", or "agent" (agent: a slug)."""
        return self._t.call(OPS["admin_config_level_read"], params=_level(level, agent))

    def update(
        self,
        values: dict[str, Any],
        *,
        version: int,
        level: str = "project",
        agent: str | None = None,
        note: str = "",
    ) -> ConfigLevel:
        """Change settings (None: inherit again); Conflict (409) if the level is past version."""
        body = {**_level(level, agent), "version": version, "values": values, "note": note}
        return self._t.call(OPS["admin_config_update"], body=body)

    def versions(
        self, level: str = "project", *, agent: str | None = None, page_size: int | None = None
    ) -> Iterator[ConfigVersion]:
        params = {**_level(level, agent), "limit": page_size}
        return self._t.pages(OPS["admin_config_versions_list"], params=params)

    def rollback(
        self, to_version: int, level: str = "project", *, agent: str | None = None
    ) -> ConfigLevel:
        body = {**_level(level, agent), "to_version": to_version}
        return self._t.call(OPS["admin_config_rollback"], body=body)


class Webhooks:
    def __init__(self, transport: Transport):
        self._t = transport

    def list(self, *, page_size: int | None = None) -> Iterator[Webhook]:
        return self._t.pages(OPS["admin_webhooks_list"], params={"limit": page_size})

    def create(self, name: str, url: str, *, active: bool = True) -> Webhook:
        body = {"name": name, "url": url, "active": active}
        return self._t.call(OPS["admin_webhooks_create"], body=body)

    def get(self, webhook_id: str) -> Webhook:
        return self._t.call(OPS["admin_webhooks_read"], path={"webhook_id": webhook_id})

    def update(self, webhook_id: str, **fields: Any) -> Webhook:
        """Change name, url and/or active."""
        path = {"webhook_id": webhook_id}
        return self._t.call(OPS["admin_webhooks_update"], path=path, body=fields)

    def delete(self, webhook_id: str) -> None:
        self._t.call(OPS["admin_webhooks_delete"], path={"webhook_id": webhook_id})

    def secret(self) -> str | None:
        """The project's signing secret (None before its first webhook)."""
        return self._t.call(OPS["admin_webhook_secret_read"])["secret"]

    def rotate_secret(self) -> str:
        return self._t.call(OPS["admin_webhook_secret_rotate"])["secret"]
