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
    # With agent_id: also the project's items of no agent (the notes a project shares).
    with_shared: bool = False

    def __post_init__(self):
        if self.without_resource and self.resource_id is not None:
            raise ValueError("a scope cannot name a resource and be without one")
        if self.with_shared and self.agent_id is None:
            raise ValueError("a scope with shared items names the agent they are shared with")

    @property
    def single_knowledge_base(self) -> uuid.UUID | None:
        if self.knowledge_base_ids is not None and len(self.knowledge_base_ids) == 1:
            return self.knowledge_base_ids[0]
        return None
