"""Where a search looks: the scope of one item kind, rendered as SQL conditions.

Scoping is part of every query (never a filter after it), so a tenant's top-k is complete.
"""

import uuid
from dataclasses import dataclass

from django.db import connection


@dataclass(frozen=True)
class Scope:
    kind: str
    project_id: uuid.UUID | None  # None only for operators searching every project
    agent_id: uuid.UUID | None = None
    resource_id: uuid.UUID | None = None
    thread_id: uuid.UUID | None = None
    knowledge_base_ids: tuple[uuid.UUID, ...] | None = None
    visible_only: bool = True
    # resource_id None means any resource; this narrows the scope to items with no resource.
    without_resource: bool = False

    def __post_init__(self):
        if self.without_resource and self.resource_id is not None:
            raise ValueError("a scope cannot name a resource and be without one")

    def where(self, alias: str) -> tuple[str, list]:
        """Return (SQL conditions, params) restricting table `alias` to this scope."""
        conditions = [f"{alias}.kind = %s"]
        params: list = [self.kind]
        for column, value in (
            ("project_id", self.project_id),
            ("agent_id", self.agent_id),
            ("resource_id", self.resource_id),
            ("thread_id", self.thread_id),
        ):
            if value is not None:
                conditions.append(f"{alias}.{column} = %s")
                params.append(db_uuid(value))
        if self.without_resource:
            conditions.append(f"{alias}.resource_id IS NULL")
        if self.knowledge_base_ids is not None:
            if not self.knowledge_base_ids:
                conditions.append("1 = 0")
            else:
                marks = ", ".join(["%s"] * len(self.knowledge_base_ids))
                conditions.append(f"{alias}.knowledge_base_id IN ({marks})")
                params += [db_uuid(kb) for kb in self.knowledge_base_ids]
        if self.visible_only:
            conditions.append(f"{alias}.visible = %s")
            params.append(True)
        return " AND ".join(conditions), params


def db_uuid(value):
    """Return a UUID as the database stores it (native on PostgreSQL, 32 hex chars on SQLite)."""
    value = value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))
    return value if connection.vendor == "postgresql" else value.hex
