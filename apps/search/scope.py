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

    def where(self, alias: str, *, leading: str | None = None) -> tuple[str, list]:
        """Return (SQL conditions, params) restricting table `alias` to this scope.

        The `leading` column (see newest_first) is compared with `= ANY(array)` instead of `=`:
        the same rows, on PostgreSQL only.
        """
        conditions = [f"{alias}.kind = %s"]
        params: list = [self.kind]
        for column, value in (
            ("project_id", self.project_id),
            ("agent_id", self.agent_id),
            ("resource_id", self.resource_id),
            ("thread_id", self.thread_id),
            ("knowledge_base_id", self._single_knowledge_base()),
        ):
            if value is None:
                continue
            if column == leading:
                conditions.append(f"{alias}.{column} = ANY(%s)")
                params.append([db_uuid(value)])
            else:
                conditions.append(f"{alias}.{column} = %s")
                params.append(db_uuid(value))
        if self.without_resource:
            conditions.append(f"{alias}.resource_id IS NULL")
        if self.knowledge_base_ids is not None and self._single_knowledge_base() is None:
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

    def newest_first(self, alias: str) -> tuple[str, list, str]:
        """Return (conditions, params, ORDER BY) that read the scope newest first by its index.

        PostgreSQL only. `ORDER BY id DESC` under equality conditions can also be served by
        walking the primary key backwards and filtering, and the planner takes that walk when
        it believes the scope is most of the table; if other scopes' rows are the newest, it
        reads all of them first. Comparing the scope's leading column with a one-element
        `= ANY(array)` selects the same rows but is no equality, so ordering by that column
        and then id can only come from the scope's own (column, ..., id) index, or a sort.
        """
        if self.thread_id is not None:
            leading = "thread_id"  # index search_item_thread (thread, id)
        elif self._single_knowledge_base() is not None:
            leading = "knowledge_base_id"  # index search_item_kb (knowledge_base, id)
        elif self.project_id is not None:
            leading = "project_id"  # index search_item_project_kind (project, kind, id)
        else:
            where, params = self.where(alias)
            return where, params, f"{alias}.id DESC"
        where, params = self.where(alias, leading=leading)
        return where, params, f"{alias}.{leading} DESC, {alias}.id DESC"

    def _single_knowledge_base(self) -> uuid.UUID | None:
        if self.knowledge_base_ids is not None and len(self.knowledge_base_ids) == 1:
            return self.knowledge_base_ids[0]
        return None


def db_uuid(value):
    """Return a UUID as the database stores it (native on PostgreSQL, 32 hex chars on SQLite)."""
    value = value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))
    return value if connection.vendor == "postgresql" else value.hex
