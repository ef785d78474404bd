"""One context answer (apps/context/answer.py): POST /context, GET /contexts/{id} and the
get_context tool over /api/v1/tools/call and over MCP give the same fields with the same values,
and the answer is the one the OpenAPI schema documents."""

import json

import jsonschema
import pytest

from apps.context.answer import Context, ContextBrief
from apps.memconfig.services import config_update
from tests.agenttools.test_mcp import mcp_run
from tests.agenttools.test_mcp import result_json as mcp_json
from tests.api.openapi import answer_schema
from tests.conftest import make_actor

BRIEF = ("thread_id", "tokens", "max_tokens", "system_prompt", "messages", "warnings")


@pytest.fixture
def alice(transactional_db):
    actor = make_actor("acme", "alice")
    config_update(
        agent=actor.agent, changes={"recent_window": 2, "context_strategy": "none"}, changed_by="t"
    )
    return actor


@pytest.fixture
def thread(alice):
    """A thread whose context has recall and recent messages with a payload."""
    thread = alice.new_thread()
    alice.append(
        thread["id"],
        {"role": "user", "content": "The harbour crane number 4 is down again."},
        {"role": "assistant", "content": "Logged it for the crane team."},
        *[{"role": "user", "content": f"filler message {n} " * 20} for n in range(30)],
        {
            "role": "assistant",
            "kind": "tool_call",
            "name": "crane_status",
            "content": "crane 4",
            "payload": {"crane": 4, "nested": {"ok": False, "at": None}},
        },
    )
    return thread


ASKED = {"query": "harbour crane", "max_tokens": 400}


def test_rest_the_tools_api_and_mcp_give_one_context_alike(live_server, alice, thread):
    rest = alice.post(f"/api/v1/threads/{thread['id']}/context", ASKED)
    assert rest.status_code == 200, rest.content
    rest = json.loads(rest.content)
    arguments = {"thread_id": thread["id"], **ASKED}
    tools = alice.post("/api/v1/tools/call", {"name": "get_context", "arguments": arguments})
    assert tools.status_code == 200, tools.content

    async def work(client):
        return mcp_json(await client.call_tool("get_context", arguments))

    mcp = mcp_run(live_server.url, alice.key, work)

    assert any(block["name"] == "recall" and block["items"] for block in rest["blocks"])
    assert rest["messages"][-1]["payload"] == {"crane": 4, "nested": {"ok": False, "at": None}}
    for brief in (tools.json()["result"], mcp):
        assert set(brief) == {"context_id", *BRIEF}
        assert {key: brief[key] for key in BRIEF} == {key: rest[key] for key in BRIEF}
    stored = alice.get(f"/api/v1/contexts/{rest['context_id']}").json()
    assert stored == rest


def test_the_answer_has_exactly_the_fields_the_schema_documents(alice, thread, written_schema):
    components = written_schema["components"]["schemas"]
    documented = answer_schema(written_schema, "/api/v1/threads/{thread_id}/context", "post")

    answer = json.loads(alice.post(f"/api/v1/threads/{thread['id']}/context", ASKED).content)

    jsonschema.validate(answer, documented)
    assert set(answer) == set(components["Context"]["properties"])
    assert all(set(block) == set(components["Block"]["properties"]) for block in answer["blocks"])
    items = [item for block in answer["blocks"] for item in block["items"]]
    assert items and all(set(item) == {"type", "id", "seq", "score"} for item in items)
    assert all(set(m) == set(components["ChatMessage"]["properties"]) for m in answer["messages"])


def test_the_tools_brief_is_part_of_the_answer_field_for_field():
    whole = Context.model_fields
    brief = ContextBrief.model_fields

    assert set(brief) < set(whole)
    assert all(brief[name].annotation == whole[name].annotation for name in brief)
