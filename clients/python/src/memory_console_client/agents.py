"""An OpenAI Agents SDK session backed by a Memory Console thread (extra: `agents`).

    session = MemoryConsoleSession(mc, external_id=chat_id, resource_id=user_id)
    agent = Agent(name="assistant", instructions=session.instructions("You are helpful."))
    await Runner.run(agent, text, session=session)

Each item the Runner adds becomes one message of the thread (a user or assistant message, a
tool call, a tool result), so Memory Console builds its memory from the conversation as from
any agent's log; the item itself rides in the message's payload and comes back unchanged.
`instructions()` puts the thread's assembled context (profile, observations, <memory>
entries, knowledge, recall) after the agent's own instructions on every model call.

Memory Console keeps raw messages: pop_item() hides the newest item from the session's
history (the thread's metadata lists it) rather than deleting it; clear_session() deletes the
thread, and the next call starts a new one for the same chat.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

try:
    from agents.memory import SessionABC
    from agents.memory.session_settings import SessionSettings
except ImportError as missing:  # the optional extra
    raise ImportError(
        "MemoryConsoleSession needs the OpenAI Agents SDK: "
        'pip install "memory-console-client[agents]"'
    ) from missing

from memory_console_client.client import MemoryConsole

CHANNEL = "openai-agents"
METADATA_KEY = "openai_agents"  # the thread's metadata: {"popped": [seq, …]}
ROLES = {"user": "user", "assistant": "assistant", "system": "system", "developer": "system"}


class MemoryConsoleSession(SessionABC):
    """Session protocol of the OpenAI Agents SDK on a Memory Console thread."""

    def __init__(
        self,
        client: MemoryConsole,
        *,
        external_id: str,
        channel: str = CHANNEL,
        resource_id: str | None = None,
        session_settings: SessionSettings | None = None,
    ):
        self.client = client
        self.channel, self.external_id, self.resource_id = channel, external_id, resource_id
        self.session_id = f"{channel}:{external_id}"
        self.session_settings = session_settings
        self._thread_id: str | None = None

    async def thread_id(self) -> str:
        """The thread's id, resolving (or creating) it on first use."""
        if self._thread_id is None:
            fields = {"resource_id": self.resource_id} if self.resource_id else {}
            thread = await asyncio.to_thread(
                self.client.threads.resolve, self.channel, self.external_id, **fields
            )
            self._thread_id = thread["id"]
        return self._thread_id

    async def get_items(self, limit: int | None = None) -> list[dict]:
        thread_id = await self.thread_id()
        messages = await asyncio.to_thread(self._visible, thread_id, limit)
        items = [item for item in map(item_of, messages) if item is not None]
        return items[-limit:] if limit else items

    async def add_items(self, items: list[Any]) -> None:
        if not items:
            return
        thread_id = await self.thread_id()
        messages = [message_of(item) for item in items]
        await asyncio.to_thread(self.client.messages.append, thread_id, *messages)

    async def pop_item(self) -> dict | None:
        thread_id = await self.thread_id()
        return await asyncio.to_thread(self._pop, thread_id)

    async def clear_session(self) -> None:
        thread_id = await self.thread_id()
        await asyncio.to_thread(self.client.threads.delete, thread_id)
        self._thread_id = None

    def instructions(
        self, base: str, *, max_tokens: int | None = None
    ) -> Callable[..., Awaitable[str]]:
        """Agent instructions: base, then the thread's assembled context for this turn.

        The context is searched for the thread's latest user message (the server's default).
        """

        async def with_context(run_context, agent) -> str:
            thread_id = await self.thread_id()
            context = await asyncio.to_thread(self.client.context, thread_id, max_tokens=max_tokens)
            prompt = context["system_prompt"].strip()
            return f"{base}\n\n{prompt}" if prompt else base

        return with_context

    # The blocking halves, run in a worker thread.

    def _popped(self, thread_id: str) -> list[int]:
        thread = self.client.threads.get(thread_id)
        return list(thread["metadata"].get(METADATA_KEY, {}).get("popped", []))

    def _visible(self, thread_id: str, limit: int | None) -> list[dict]:
        popped = set(self._popped(thread_id))
        if limit:  # the newest, with room for the hidden ones among them
            messages = self.client.messages.latest(thread_id, min(limit + len(popped), 1000))
        else:
            messages = list(self.client.messages.list(thread_id, page_size=200))
        return [message for message in messages if message["seq"] not in popped]

    def _pop(self, thread_id: str) -> dict | None:
        thread = self.client.threads.get(thread_id)
        metadata = dict(thread["metadata"])
        state = dict(metadata.get(METADATA_KEY, {}))
        popped = list(state.get("popped", []))
        newest = self.client.messages.latest(thread_id, min(len(popped) + 50, 1000))
        for message in reversed(newest):
            item = item_of(message)
            if message["seq"] in popped or item is None:
                continue
            state["popped"] = [*popped, message["seq"]]
            self.client.threads.update(thread_id, metadata={**metadata, METADATA_KEY: state})
            return item
        return None


def message_of(item: Any) -> dict:
    """The thread message that stores one session item (the item itself in its payload)."""
    item = _plain(item)
    kind = item.get("type", "message")
    if kind == "function_call":
        payload = {"id": item.get("call_id"), "arguments": item.get("arguments", ""), "item": item}
        name = item.get("name", "")
        return {"role": "assistant", "kind": "tool_call", "name": name, **_p(payload)}
    if kind == "function_call_output":
        output = item.get("output", "")
        content = output if isinstance(output, str) else json.dumps(output)
        payload = {"tool_call_id": item.get("call_id"), "item": item}
        return {"role": "tool", "kind": "tool_result", "content": content, **_p(payload)}
    if kind == "message" and item.get("role") in ROLES:
        role = ROLES[item["role"]]
        return {"role": role, "content": _text(item.get("content")), **_p({"item": item})}
    # Reasoning and other items: kept for the session, no text for the memory.
    return {"role": "assistant", "kind": "event", "name": kind, **_p({"item": item})}


def item_of(message: dict) -> dict | None:
    """The session item of a thread message: the stored item, else one made from the message
    (a thread written by other code); None for a message no item stands for."""
    payload = message.get("payload") or {}
    if isinstance(payload, dict) and isinstance(payload.get("item"), dict):
        return payload["item"]
    if message["kind"] == "tool_call":
        return {
            "type": "function_call",
            "call_id": payload.get("id", ""),
            "name": message["name"],
            "arguments": payload.get("arguments", ""),
        }
    if message["kind"] == "tool_result":
        call_id = payload.get("tool_call_id", "")
        return {"type": "function_call_output", "call_id": call_id, "output": message["content"]}
    if message["kind"] == "message" and message["role"] in ("user", "assistant", "system"):
        return {"role": message["role"], "content": message["content"]}
    return None


def _p(payload: dict) -> dict:
    return {"payload": payload, "metadata": {"source": CHANNEL}}


def _plain(item: Any) -> dict:
    """An item as a JSON object (the SDK may hand over pydantic models)."""
    if hasattr(item, "model_dump"):
        return item.model_dump(exclude_unset=True, mode="json")
    return json.loads(json.dumps(item, default=str))


def _text(content: Any) -> str:
    """The text of a message's content: a string, or a list of parts with text."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [part.get("text", "") for part in content if isinstance(part, dict)]
        return "\n".join(part for part in parts if part)
    return ""
