"""examples/agent_loop.py against a real server and the loopback OpenAI-compatible model."""

import importlib.util
import json
from pathlib import Path

import pytest
from memory_console_client import MemoryConsole
from openai import OpenAI

from apps.episodic.models import MemoryEntry
from apps.jobs.services import job_run_pending
from apps.memconfig.services import config_update
from apps.providers.fake_openai import FakeOpenAIServer
from apps.threads.models import Message

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "agent_loop.py"


@pytest.fixture
def loop():
    spec = importlib.util.spec_from_file_location("agent_loop", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def model():
    with FakeOpenAIServer() as server:
        yield server


def test_each_turn_logs_the_user_the_tools_and_the_answer_and_reads_the_context(
    live_server, transactional_db, loop, model
):
    from tests.conftest import make_actor

    alice = make_actor("acme", "alice")
    config_update(agent=alice.agent, changes={"episodic_approval_required": False}, changed_by="t")
    memory = MemoryConsole(live_server.url, alice.key)
    client = OpenAI(base_url=model.base_url, api_key="test", max_retries=0)
    thread = memory.threads.resolve("cli", "t1")
    model.script(
        "Noted. [[MEMORY: Ann's desk is in room 4.12]]",
        {
            "tool_calls": [
                {"id": "call_1", "name": "current_time", "arguments": {}},
                {"id": "call_2", "name": "recall_memory", "arguments": {"query": "Ann desk"}},
                {"id": "call_3", "name": "recall_memory", "arguments": {"top_k": 0}},
            ]
        },
        "It is morning; Ann sits in room 4.12.",
    )

    first = loop.turn(memory, client, "fake", thread, "Ann's desk moved to room 4.12")
    job_run_pending()  # the [[MEMORY: …]] fact becomes an entry
    second = loop.turn(memory, client, "fake", thread, "what time is it, and where is Ann?")

    assert first == "Noted. [[MEMORY: Ann's desk is in room 4.12]]"
    assert second == "It is morning; Ann sits in room 4.12."
    log = list(Message.objects.order_by("seq").values_list("role", "kind", "name"))
    assert log == [
        ("user", "message", ""),
        ("assistant", "message", ""),
        ("user", "message", ""),
        ("assistant", "tool_call", "current_time"),
        ("tool", "tool_result", "current_time"),
        ("assistant", "tool_call", "recall_memory"),
        ("tool", "tool_result", "recall_memory"),
        ("assistant", "tool_call", "recall_memory"),
        ("tool", "tool_result", "recall_memory"),
        ("assistant", "message", ""),
    ]
    entry = MemoryEntry.objects.get()
    assert entry.content == "Ann's desk is in room 4.12"
    assert entry.recall_count == 1  # recall_memory ran through POST /api/v1/tools/call
    calls = model.bodies("/v1/chat/completions")
    assert len(calls) == 3
    system = calls[1]["messages"][0]["content"]
    assert "<memory>" in system and "room 4.12" in system
    after_tool = calls[2]["messages"]
    results = {m["tool_call_id"]: m["content"] for m in after_tool if m["role"] == "tool"}
    assert set(results) == {"call_1", "call_2", "call_3"}
    recalled = json.loads(results["call_2"])["results"]
    assert [hit["id"] for hit in recalled] == [str(entry.id)]
    assert results["call_3"].startswith("Error: arguments.query: Field required")
    offered = [tool["function"]["name"] for tool in calls[2]["tools"]]
    assert offered == [
        "current_time",
        "search_memory",
        "recall_memory",
        "remember",
        "note_read",
        "note_write",
        "note_search",
    ]
    recall_schema = calls[2]["tools"][2]["function"]["parameters"]
    assert recall_schema["required"] == ["query"]
