"""The context answer: one definition that every door sends.

POST/GET /api/v1/threads/{id}/context and GET /api/v1/contexts/{id} send Context, the
get_context tool (REST function calling and MCP) its part ContextBrief. The models are the
contract: context_answer() and context_brief() pass the answer assembly built (snapshots.py)
through them and write it as JSON-ready data, and the OpenAPI schema is generated from the same
models (apps/api/schema.py), under the component names the API has always had.

Optional fields (a replayed item's `changed` / `deleted`, a warning's `block`) are sent only
when the answer has them. Cost, validated, dumped and rendered to JSON (bench/context.py's
thread, in-process, 300 runs each, the same hour): 0.18 ms for a 4,000-token answer of 42 items
and 1.30 ms for a 32,000-token one of 305, where DRF's serializers, passing items and messages
through unchecked, took 0.33 and 0.68 ms: a typical budget is cheaper, the largest a little
dearer, and every item is now what the schema says.
"""

import uuid
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, Field

# A chunk's id is an integer, every other item's a UUID: sent as text.
Text = Annotated[str, BeforeValidator(str)]


class Item(BaseModel):
    """One thing a block shows: what it is, its id, its message number and its rank score."""

    type: Literal[
        "message",
        "observation",
        "summary",
        "entry",
        "chunk",
        "note",
        "profile",
        "session_memory",
    ]
    id: Text
    seq: int | None
    score: float | None
    changed: bool = Field(False, description="Replays only: the item's row changed since.")
    deleted: bool = Field(
        False, description="Replays only: the item's row is gone (its text is left out)."
    )


class Block(BaseModel):
    name: str
    tokens: int = Field(description="What the block's text (or messages) takes.")
    planned_tokens: int | None = Field(
        description="The block's share of max_tokens, planned before anything was searched "
        "(null for contexts stored before budgets were planned)."
    )
    granted_tokens: int | None = Field(
        description="What the block was given: its share, less what it did not need, plus "
        "what other blocks left."
    )
    text: str
    items: list[Item]


class ChatMessage(BaseModel):
    """A recent message as a chat call takes it."""

    role: str
    content: str
    name: str
    kind: str
    payload: Any
    seq: int


class ContextWarning(BaseModel):
    code: str
    block: str = Field("", description="The block it is about, when it is about one.")
    message: str


class Context(BaseModel):
    """The whole answer: what the agent sends its model, each block, the query and when."""

    context_id: uuid.UUID
    thread_id: uuid.UUID
    resource_id: str | None
    config_version: str
    query: str = Field(description="The query the blocks were searched for.")
    query_source: Literal["request", "latest_user_message", "none"] | None = Field(
        description="request: the body's query; latest_user_message: no query was given, so "
        "the thread's latest user message was used; none: neither, so nothing was searched."
    )
    max_tokens: int
    tokens: int
    created_at: datetime
    blocks: list[Block]
    system_prompt: str
    messages: list[ChatMessage]
    warnings: list[ContextWarning]


class ContextBrief(BaseModel):
    """What the get_context tool gives: a context's text, messages and warnings. Its fields are
    Context's, with the same types (tests/context/test_answer.py holds them to it)."""

    context_id: uuid.UUID
    thread_id: uuid.UUID
    tokens: int
    max_tokens: int
    system_prompt: str
    messages: list[ChatMessage]
    warnings: list[ContextWarning]


def context_answer(answer: dict) -> dict:
    """Return a context as POST /context and GET /contexts/{id} send it."""
    return Context.model_validate(answer).model_dump(mode="json", exclude_unset=True)


def context_brief(answer: dict) -> dict:
    """Return a context as the get_context tool gives it."""
    return ContextBrief.model_validate(answer).model_dump(mode="json", exclude_unset=True)
