"""One answer to a search (apps/search/results.py): POST /api/v1/search, the search_memory tool
over /api/v1/tools/call and over MCP give the same fields with the same values, and the answer
is the one the OpenAPI schema documents."""

import json

import jsonschema
import pytest

from apps.jobs.services import job_run_pending
from apps.memconfig.services import config_update
from tests.agenttools.test_mcp import mcp_run
from tests.agenttools.test_mcp import result_json as mcp_json
from tests.api.openapi import answer_schema
from tests.conftest import make_actor

QUERY = {"query": "harbour crane", "scopes": ["messages", "knowledge", "episodic", "notes"]}
HIT_TYPES = {"message", "knowledge", "episodic", "note"}


@pytest.fixture
def alice(transactional_db):
    actor = make_actor("acme", "alice")
    # No conversation shares: the turns around a match stay in its range, not hits of their own
    # (conversation.py), so every field of a range is seen.
    changes = {
        "episodic_approval_required": False,
        "search_context_neighbour_share": 0.0,
        "search_context_session_share": 0.0,
    }
    config_update(agent=actor.agent, changes=changes, changed_by="t")
    return actor


@pytest.fixture
def searchable(alice):
    """Every kind of hit for QUERY: messages (a tool call among them, with messages around
    them), a knowledge chunk, a memory entry and a note."""
    thread = alice.new_thread()
    alice.append(
        thread["id"],
        *[
            {"role": "user", "content": text}
            for text in ("intro", "the harbour crane is down", "closing")
        ],
        {
            "role": "assistant",
            "kind": "tool_call",
            "name": "crane_status",
            "content": "harbour crane",
            "payload": {"crane": 4, "nested": {"ok": False, "at": None}},
        },
    )
    alice.post("/api/v1/memory/upsert", {"content": "harbour crane manual", "namespace": "ops"})
    alice.post("/api/v1/episodic", {"content": "Ann runs the harbour crane", "resource_id": "ann"})
    alice.post("/api/v1/notes", {"path": "ops/crane.md", "content": "# Harbour crane\nCheck."})
    job_run_pending()
    return alice


def _rest(actor, body: dict) -> dict:
    response = actor.post("/api/v1/search", body)
    assert response.status_code == 200, response.content
    return json.loads(response.content)


def _tools_call(actor, arguments: dict) -> dict:
    response = actor.post("/api/v1/tools/call", {"name": "search_memory", "arguments": arguments})
    assert response.status_code == 200, response.content
    return response.json()["result"]


def test_rest_the_tools_api_and_mcp_answer_a_search_alike(live_server, searchable):
    rest = _rest(searchable, QUERY)

    async def work(client):
        return mcp_json(await client.call_tool("search_memory", QUERY))

    mcp = mcp_run(live_server.url, searchable.key, work)

    assert {hit["type"] for hit in rest["results"]} == HIT_TYPES
    assert any(hit["context"] and hit["context"]["before"] for hit in rest["results"])
    assert _tools_call(searchable, QUERY) == rest
    assert mcp == rest


def test_they_give_the_same_warnings_too(searchable):
    # No embedder, so a similarity floor cannot be applied, and both say so.
    asked = {**QUERY, "min_similarity": 0.5}

    rest = _rest(searchable, asked)

    assert [warning["code"] for warning in rest["warnings"]] == ["min_similarity_ignored"]
    assert _tools_call(searchable, asked) == rest


def test_each_hit_has_exactly_the_fields_the_schema_documents(searchable, written_schema):
    components = written_schema["components"]["schemas"]

    answer = _rest(searchable, QUERY)

    jsonschema.validate(answer, answer_schema(written_schema, "/api/v1/search", "post"))
    fields = set(components["SearchResult"]["properties"])
    context_fields = set(components["SearchContextMessage"]["properties"])
    around = [
        message
        for hit in answer["results"]
        if hit["context"]
        for message in hit["context"]["before"] + hit["context"]["after"]
    ]
    assert {hit["type"] for hit in answer["results"]} == {
        "message",
        "knowledge",
        "episodic",
        "note",
    }
    assert around
    assert all(set(hit) == fields for hit in answer["results"])
    assert all(set(message) == context_fields for message in around)


def test_the_schema_is_in_openapi_3_0s_terms(written_schema):
    """Nullable fields say `nullable` (3.0), not pydantic's `anyOf` with a null type (3.1)."""
    components = written_schema["components"]["schemas"]
    result = components["SearchResult"]["properties"]
    text = json.dumps({name: components[name] for name in components if name.startswith("Search")})

    assert '"null"' not in text and '"title"' not in text and '"const"' not in text
    assert result["thread_id"] == {"format": "uuid", "type": "string", "nullable": True}
    assert result["context"]["nullable"] is True
    assert result["context"]["allOf"] == [{"$ref": "#/components/schemas/SearchContext"}]
