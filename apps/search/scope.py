"""Where a search looks: the scope of one item kind (the backends render it as SQL)."""

import uuid
from dataclasses import dataclass


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

    @property
    def single_knowledge_base(self) -> uuid.UUID | None:
        if self.knowledge_base_ids is not None and len(self.knowledge_base_ids) == 1:
            return self.knowledge_base_ids[0]
        return None
