"""The client: `MemoryConsole(base_url, api_key)` and its parts, one per area of the API.

The agent loop is three calls::

    thread = mc.threads.resolve("telegram", chat_id, resource_id=user_id)
    mc.messages.append(thread, {"role": "user", "content": text})
    context = mc.context(thread, query=text, max_tokens=4000)
"""

from __future__ import annotations  # the classes' list() methods shadow list[...]

import uuid
from collections.abc import Iterator
from typing import Any

from memory_console_client.admin import Config, Webhooks
from memory_console_client.operations import OPERATIONS as OPS
from memory_console_client.transport import Transport
from memory_console_client.types import (
    AppendedMessage,
    Context,
    Entry,
    Message,
    OpenedRun,
    Run,
    SearchResult,
    Thread,
)

ThreadRef = Thread | dict | str  # a thread as the API answered it, or its id


def ref(thing: Any) -> str:
    """Return the id of an object the API answered (a dict with "id"), or the id itself."""
    return str(thing["id"] if isinstance(thing, dict) else thing)


def _given(**fields: Any) -> dict[str, Any]:
    """The fields a caller gave (None: left out, so the server's default applies)."""
    return {key: value for key, value in fields.items() if value is not None}


class Threads:
    def __init__(self, transport: Transport):
        self._t = transport

    def resolve(self, channel: str, external_id: str, **fields: Any) -> Thread:
        """Return the agent's thread for this chat, creating it (resource_id, title, metadata)."""
        body = _given(channel=channel, external_id=external_id, **fields)
        return self._t.call(OPS["threads_resolve_or_create"], body=body, retry_safe=True)

    def create(self, **fields: Any) -> Thread:
        """Create a thread (resource_id, title, metadata; no channel)."""
        return self._t.call(OPS["threads_resolve_or_create"], body=_given(**fields))

    def get(self, thread: ThreadRef) -> Thread:
        return self._t.call(OPS["threads_read"], path={"thread_id": ref(thread)})

    def update(self, thread: ThreadRef, **fields: Any) -> Thread:
        """Change title and/or metadata (metadata is replaced whole)."""
        path = {"thread_id": ref(thread)}
        return self._t.call(OPS["threads_update"], path=path, body=_given(**fields))

    def delete(self, thread: ThreadRef) -> None:
        self._t.call(OPS["threads_delete"], path={"thread_id": ref(thread)})

    def list(self, *, resource_id=None, channel=None, page_size=None) -> Iterator[Thread]:
        """Every thread of the agent, newest first, page by page as the iteration needs."""
        params = {"resource_id": resource_id, "channel": channel, "limit": page_size}
        return self._t.pages(OPS["threads_list"], params=params)


class Messages:
    def __init__(self, transport: Transport):
        self._t = transport

    def append(self, thread: ThreadRef, *messages: dict[str, Any]) -> list[AppendedMessage]:
        """Append messages ({role, content, kind, name, payload, metadata, run_id, …}).

        A message without an idempotency_key gets one, so a retried append never stores it
        twice (the server answers the stored one, replayed=true).
        """
        batch = [{"idempotency_key": str(uuid.uuid4()), **message} for message in messages]
        answer = self._t.call(
            OPS["messages_append"],
            path={"thread_id": ref(thread)},
            body={"messages": batch},
            retry_safe=True,
        )
        return answer["messages"]

    def list(
        self, thread: ThreadRef, *, after_seq: int = 0, page_size: int | None = None
    ) -> Iterator[Message]:
        """Every message after after_seq, oldest first, fetched a page at a time."""
        op, path = OPS["messages_list"], {"thread_id": ref(thread)}
        while True:
            params = {"after_seq": after_seq, "limit": page_size}
            page = self._t.call(op, path=path, params=params)
            yield from page["results"]
            if not page["has_more"] or not page["results"]:
                return
            after_seq = page["results"][-1]["seq"]

    def latest(self, thread: ThreadRef, limit: int) -> list[Message]:
        """The newest limit messages, oldest first."""
        path = {"thread_id": ref(thread)}
        page = self._t.call(
            OPS["messages_list"], path=path, params={"before_seq": 2**62, "limit": limit}
        )
        return page["results"]


class Contexts:
    """The contexts a thread was given: each stored, re-rendered on request."""

    def __init__(self, transport: Transport):
        self._t = transport

    def list(self, thread: ThreadRef, *, page_size: int | None = None) -> Iterator[dict]:
        """The thread's contexts, newest first: {id, query, max_tokens, tokens, created_at}."""
        path, params = {"thread_id": ref(thread)}, {"limit": page_size}
        return self._t.pages(OPS["contexts_list"], path=path, params=params)

    def get(self, context_id: str) -> Context:
        """A stored context re-rendered (items changed since are flagged)."""
        return self._t.call(OPS["context_read"], path={"context_id": context_id})


class Runs:
    def __init__(self, transport: Transport):
        self._t = transport

    def open(self, channel: str, external_id: str, **fields: Any) -> OpenedRun:
        """Resolve or create the chat's thread and start a run in it, in one call."""
        body = _given(channel=channel, external_id=external_id, **fields)
        return self._t.call(OPS["runs_open"], body=body)

    def start(self, thread: ThreadRef, **fields: Any) -> Run:
        path = {"thread_id": ref(thread)}
        return self._t.call(OPS["runs_start"], path=path, body=_given(**fields))

    def get(self, run: Run | str) -> Run:
        return self._t.call(OPS["runs_read"], path={"run_id": ref(run)})

    def finish(self, run: Run | str, status: str = "succeeded", **fields: Any) -> Run:
        """Finish a run: status succeeded, failed or cancelled; summary, error, metadata."""
        body = _given(status=status, **fields)
        return self._t.call(OPS["runs_finish"], path={"run_id": ref(run)}, body=body)


class Entries:
    """Episodic memory entries of the agent."""

    def __init__(self, transport: Transport):
        self._t = transport

    def create(self, content: str, **fields: Any) -> Entry:
        return self._t.call(OPS["episodic_create"], body=_given(content=content, **fields))

    def get(self, entry: Entry | str) -> Entry:
        return self._t.call(OPS["episodic_read"], path={"entry_id": ref(entry)})

    def update(self, entry: Entry | str, *, content: str, version: int) -> Entry:
        body = {"content": content, "version": version}
        return self._t.call(OPS["episodic_update"], path={"entry_id": ref(entry)}, body=body)

    def delete(self, entry: Entry | str) -> None:
        self._t.call(OPS["episodic_delete"], path={"entry_id": ref(entry)})

    def list(self, *, resource_id=None, status=None, kind=None, page_size=None) -> Iterator[Entry]:
        params = {"resource_id": resource_id, "status": status, "kind": kind, "limit": page_size}
        return self._t.pages(OPS["episodic_list"], params=params)

    def recall(self, query: str, **fields: Any) -> list[Entry]:
        """recall_memory: the entries that match query (resource_id, top_k)."""
        return self._t.call(OPS["episodic_recall"], body=_given(query=query, **fields))["results"]


class Tools:
    def __init__(self, transport: Transport):
        self._t = transport

    def list(self) -> list[dict]:
        """Memory Console's tools as function definitions (`tools=` of a chat completion)."""
        return self._t.call(OPS["tools_list"])["tools"]

    def call(self, name: str, arguments: dict | str | None = None) -> dict:
        """Run a tool call as a model wrote it (arguments: an object or its JSON text)."""
        return self._t.call(OPS["tools_call"], body=_given(name=name, arguments=arguments))


class MemoryConsole:
    """A Memory Console API client for one agent (or project-admin) key."""

    def __init__(self, base_url: str, api_key: str, **options: Any):
        """options: timeout, max_retries (3), backoff (0.5 s), max_wait (30 s), http."""
        self.transport = Transport(base_url, api_key, **options)
        self.threads = Threads(self.transport)
        self.messages = Messages(self.transport)
        self.runs = Runs(self.transport)
        self.contexts = Contexts(self.transport)
        self.entries = Entries(self.transport)
        self.tools = Tools(self.transport)
        self.config = Config(self.transport)
        self.webhooks = Webhooks(self.transport)

    def __enter__(self) -> MemoryConsole:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def close(self) -> None:
        self.transport.close()

    def context(
        self, thread: ThreadRef, *, query: str | None = None, max_tokens: int | None = None
    ) -> Context:
        """The assembled context for the next model call: system_prompt, messages, blocks."""
        return self.transport.call(
            OPS["context_build"],
            path={"thread_id": ref(thread)},
            body=_given(query=query, max_tokens=max_tokens),
        )

    def search(self, query: str, **fields: Any) -> list[SearchResult]:
        """Search memory: scopes, thread_id, resource_id, knowledge_base, top_k, message_range."""
        if "thread" in fields:
            fields["thread_id"] = ref(fields.pop("thread"))
        answer = self.transport.call(OPS["search"], body=_given(query=query, **fields))
        return answer["results"]
