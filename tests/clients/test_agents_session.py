"""MemoryConsoleSession with the real openai-agents package, and the example agent on it."""

import asyncio
import importlib.util
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from agents import set_tracing_disabled
from memory_console_client.agents import MemoryConsoleSession
from openai import AsyncOpenAI

from apps.jobs.services import job_run_pending
from apps.memconfig.services import config_update
from apps.providers.fake_openai import FakeOpenAIServer
from apps.threads.models import Message, Thread

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "agents_session.py"

ITEMS = [
    {"role": "user", "content": "What time is it?"},
    {
        "type": "function_call",
        "call_id": "call_1",
        "name": "current_time",
        "arguments": '{"timezone": "UTC"}',
    },
    {"type": "function_call_output", "call_id": "call_1", "output": "09:00"},
    {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "It is nine.", "annotations": []}],
    },
]


def run(coroutine):
    """Run the coroutine on an event loop of its own, in a thread of its own: in one test run
    the browser tests' Playwright keeps a loop running in this thread, and asyncio.run()
    refuses to start a second one there."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def test_items_go_in_come_out_pop_and_clear(mc):
    session = MemoryConsoleSession(mc, external_id="chat-1", resource_id="ann")

    run(session.add_items(ITEMS))
    everything = run(session.get_items())
    newest = run(session.get_items(limit=2))
    popped = run(session.pop_item())
    after_pop = run(session.get_items())

    assert everything == ITEMS
    assert newest == ITEMS[-2:]
    assert popped == ITEMS[-1]
    assert after_pop == ITEMS[:-1]
    log = list(Message.objects.order_by("seq").values_list("role", "kind", "name", "content"))
    assert log == [
        ("user", "message", "", "What time is it?"),
        ("assistant", "tool_call", "current_time", ""),
        ("tool", "tool_result", "", "09:00"),
        ("assistant", "message", "", "It is nine."),  # kept: pop hides it from the session
    ]
    thread = Thread.objects.get()
    assert (thread.channel, thread.external_id, thread.resource.external_id) == (
        "openai-agents",
        "chat-1",
        "ann",
    )

    run(session.clear_session())

    assert not Thread.objects.exists()
    assert run(session.get_items()) == []
    run(session.add_items([ITEMS[0]]))
    assert run(session.get_items()) == [ITEMS[0]]
    assert Thread.objects.get().id != thread.id


def test_a_second_session_on_the_same_chat_sees_the_history(mc):
    run(MemoryConsoleSession(mc, external_id="chat-2").add_items(ITEMS[:1]))

    again = MemoryConsoleSession(mc, external_id="chat-2")

    assert run(again.get_items()) == ITEMS[:1]
    assert run(again.pop_item()) == ITEMS[0]
    assert run(again.pop_item()) is None


def test_a_thread_written_by_other_code_reads_as_items(mc):
    thread = mc.threads.resolve("openai-agents", "chat-3")
    mc.messages.append(
        thread,
        {"role": "user", "content": "hi"},
        {"role": "assistant", "kind": "tool_call", "name": "t", "payload": {"id": "c1"}},
        {"role": "tool", "kind": "tool_result", "content": "ok", "payload": {"tool_call_id": "c1"}},
    )

    items = run(MemoryConsoleSession(mc, external_id="chat-3").get_items())

    assert items == [
        {"role": "user", "content": "hi"},
        {"type": "function_call", "call_id": "c1", "name": "t", "arguments": ""},
        {"type": "function_call_output", "call_id": "c1", "output": "ok"},
    ]


@pytest.fixture
def example():
    spec = importlib.util.spec_from_file_location("agents_session", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_example_agent_runs_with_its_history_and_memory_in_memory_console(
    mc, alice_live, example
):
    set_tracing_disabled(True)
    config_update(
        agent=alice_live.agent, changes={"episodic_approval_required": False}, changed_by="t"
    )
    session = MemoryConsoleSession(mc, external_id="chat-4", resource_id="ann")
    with FakeOpenAIServer() as model:

        async def one_turn(text: str) -> str:
            # A client per event loop: asyncio.run() closes the loop its connections live on.
            client = AsyncOpenAI(base_url=model.base_url, api_key="test", max_retries=0)
            agent = example.build_agent(session, client, "fake")
            return await example.turn(agent, session, text)

        model.script(
            "Noted. [[MEMORY: Ann's desk is in room 4.12]]",
            {"tool_calls": [{"id": "call_1", "name": "current_time", "arguments": {}}]},
            "It is morning; Ann sits in room 4.12.",
        )

        first = run(one_turn("Ann's desk moved to room 4.12"))
        job_run_pending()  # the [[MEMORY: …]] fact becomes an entry
        second = run(one_turn("what time is it, and where is Ann?"))
        calls = model.bodies("/v1/chat/completions")

    assert first == "Noted. [[MEMORY: Ann's desk is in room 4.12]]"
    assert second == "It is morning; Ann sits in room 4.12."
    log = list(Message.objects.order_by("seq").values_list("role", "kind", "name"))
    assert log == [
        ("user", "message", ""),
        ("assistant", "message", ""),
        ("user", "message", ""),
        ("assistant", "tool_call", "current_time"),
        ("tool", "tool_result", ""),
        ("assistant", "message", ""),
    ]
    assert len(calls) == 3
    system = calls[1]["messages"][0]
    assert system["role"] == "system"
    assert system["content"].startswith(example.SYSTEM)
    assert "<memory>" in system["content"] and "room 4.12" in system["content"]
    history = [(m["role"], m.get("content")) for m in calls[1]["messages"][1:]]
    assert history == [
        ("user", "Ann's desk moved to room 4.12"),
        ("assistant", "Noted. [[MEMORY: Ann's desk is in room 4.12]]"),
        ("user", "what time is it, and where is Ann?"),
    ]
    tool_result = calls[2]["messages"][-1]
    assert tool_result["role"] == "tool" and tool_result["tool_call_id"] == "call_1"
    assert "UTC asked" in tool_result["content"]
