"""The shapes of the API's answers, as TypedDicts (the keys the client relies on).

The repository's tests check each key against the response schema of its operation.
"""

from typing import Any, TypedDict


class Thread(TypedDict):
    id: str
    resource_id: str | None
    channel: str
    external_id: str
    title: str
    metadata: dict[str, Any]
    last_seq: int
    message_count: int
    created_at: str


class Message(TypedDict):
    id: str
    thread_id: str
    seq: int
    role: str
    kind: str
    name: str
    content: str
    payload: Any
    metadata: dict[str, Any]
    run_id: str | None
    idempotency_key: str | None
    created_at: str


class AppendedMessage(Message):
    replayed: bool


class ContextBlock(TypedDict):
    name: str
    tokens: int
    text: str
    items: list[dict[str, Any]]


class ChatMessage(TypedDict):
    role: str
    content: str
    name: str
    kind: str
    payload: Any
    seq: int


class Context(TypedDict):
    context_id: str
    thread_id: str
    resource_id: str | None
    config_version: str
    max_tokens: int
    tokens: int
    blocks: list[ContextBlock]
    system_prompt: str
    messages: list[ChatMessage]
    warnings: list[dict[str, Any]]


class Run(TypedDict):
    id: str
    thread_id: str
    name: str
    status: str
    summary: str
    metadata: dict[str, Any]
    created_at: str
    finished_at: str | None


class OpenedRun(Run):
    thread_created: bool


class SearchResult(TypedDict):
    type: str
    id: str
    content: str
    score: float
    signals: dict[str, Any]
    thread_id: str | None
    seq: int | None


class Entry(TypedDict):
    id: str
    resource_id: str | None
    kind: str
    content: str
    source: str
    status: str
    version: int
    metadata: dict[str, Any]


class EffectiveConfig(TypedDict):
    project: str
    agent: str
    values: dict[str, Any]
    sources: dict[str, str]


class ConfigLevel(TypedDict):
    level: str
    project: str
    agent: str | None
    version: int
    values: dict[str, Any]


class ConfigVersion(TypedDict):
    version: int
    changed_by: str
    changed_at: str
    before: dict[str, Any]
    after: dict[str, Any]
    note: str


class Webhook(TypedDict):
    id: str
    name: str
    url: str
    active: bool


# Which operation answers each shape: the tests compare the keys with its schema.
RETURNS: dict[str, type] = {
    "threads_read": Thread,
    "messages_list": Message,
    "messages_append": AppendedMessage,
    "context_build": Context,
    "context_read": Context,
    "runs_read": Run,
    "runs_open": OpenedRun,
    "search": SearchResult,
    "episodic_read": Entry,
    "config_read": EffectiveConfig,
    "admin_config_level_read": ConfigLevel,
    "admin_config_versions_list": ConfigVersion,
    "admin_webhooks_read": Webhook,
}
