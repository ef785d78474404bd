"""Argument types shared by the tools: text the database can store, a thread by id or by chat."""

import uuid
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, Strict, model_validator

from apps.core.text import json_nodes, text_problem


def _storable_text(value: str) -> str:
    problem = text_problem(value)
    if problem:
        raise ValueError(f"The text {problem}")
    return value


def _storable_json(value: Any) -> Any:
    """Refuse JSON whose strings (keys included) the database cannot store."""
    for _, node, _ in json_nodes(value):
        if isinstance(node, dict):
            for key in node:
                _storable_text(str(key))
        elif isinstance(node, str):
            _storable_text(node)
    return value


Text = Annotated[str, AfterValidator(_storable_text)]
Json = Annotated[Any, AfterValidator(_storable_json)]
JsonObject = Annotated[dict[str, Any], AfterValidator(_storable_json)]
# Numbers as JSON numbers only, as the REST API takes them: validated laxly, "5", 5.0 and true
# were read as 5 (true as 1: a plan_update with "version": true replaced version 1 of a plan).
Integer = Annotated[int, Strict()]
Number = Annotated[float, Strict()]  # an integer is a number too


class Arguments(BaseModel):
    """Tool arguments: unknown names are refused, so a typo is told rather than ignored."""

    model_config = ConfigDict(extra="forbid")


class ThreadArguments(Arguments):
    """Arguments that name one of the agent's threads."""

    thread_id: uuid.UUID | None = Field(
        None, description="The thread's id. Or leave it out and give channel + external_id."
    )
    channel: Text | None = Field(
        None, max_length=64, description="The thread's channel, e.g. 'telegram' (with external_id)."
    )
    external_id: Text | None = Field(
        None, max_length=200, description="The chat's id on that channel (with channel)."
    )

    @model_validator(mode="after")
    def _one_way_to_name_the_thread(self):
        if self.thread_id is None and not self.external_id:
            raise ValueError("Name the thread: give thread_id, or channel and external_id.")
        if self.thread_id is not None and (self.channel or self.external_id):
            raise ValueError("Give thread_id or channel + external_id, not both.")
        return self
