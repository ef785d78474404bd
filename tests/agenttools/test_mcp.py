"""MCP over real HTTP: the official SDK's client against the live server's /mcp."""

import json

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from prometheus_client import REGISTRY

from apps.audit.models import AuditEvent
from apps.episodic.models import MemoryEntry
from apps.memconfig.services import config_update
from apps.tenancy.services import api_key_revoke
from apps.threads.models import Message
from tests.conftest import make_actor
from tests.processes import run_async

NAN = float("nan")


def mcp_run(url: str, key: str | None, work):
    """Connect an SDK client to url/mcp with the key, run work(client), return its result."""

    async def main():
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
            transport = streamable_http_client(f"{url}/mcp", http_client=http)
            async with Client(transport) as client:
                return await work(client)

    return run_async(main())


def post_raw(url: str, key: str, *, content: str) -> httpx2.Response:
    """POST a JSON-RPC body to url as a client without the SDK would, with the key."""
    return httpx2.post(
        url,
        headers={
            "Authorization": f"Bearer {key}",
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "MCP-Protocol-Version": "2025-06-18",
        },
        content=content,
    )


def result_json(result) -> dict:
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text)


@pytest.fixture
def alice(transactional_db):
    actor = make_actor("acme", "alice")
    config_update(agent=actor.agent, changes={"episodic_approval_required": False}, changed_by="t")
    return actor


def test_a_client_lists_the_tools_and_calls_them(live_server, alice):
    async def work(client):
        listed = await client.list_tools()
        appended = result_json(
            await client.call_tool(
                "append_messages",
                {
                    "channel": "cli",
                    "external_id": "t1",
                    "messages": [
                        {"role": "user", "content": "My locker is number 42."},
                        {"role": "assistant", "content": "Noted."},
                    ],
                },
            )
        )
        context = result_json(
            await client.call_tool(
                "get_context", {"channel": "cli", "external_id": "t1", "max_tokens": 2000}
            )
        )
        remembered = result_json(
            await client.call_tool(
                "remember",
                {
                    "content": "The user's locker is number 42.",
                    "evidence": "My locker is number 42.",
                    "message_id": appended["messages"][0]["id"],
                    "source": "user_assertion",
                },
            )
        )
        recalled = result_json(await client.call_tool("recall_memory", {"query": "locker"}))
        return listed, appended, context, remembered, recalled

    listed, appended, context, remembered, recalled = mcp_run(live_server.url, alice.key, work)

    names = {tool.name for tool in listed.tools}
    assert names == {
        "get_context",
        "append_messages",
        "search_memory",
        "recall_memory",
        "remember",
        "plan_get",
        "plan_update",
        "note_read",
        "note_write",
        "note_search",
    }
    assert [m["seq"] for m in appended["messages"]] == [1, 2]
    assert [m["content"] for m in context["messages"]] == ["My locker is number 42.", "Noted."]
    assert context["thread_id"] == appended["thread_id"]
    assert remembered["created"] and remembered["status"] == "approved"
    assert [hit["id"] for hit in recalled["results"]] == [remembered["id"]]
    assert Message.objects.filter(thread_id=appended["thread_id"]).count() == 2
    assert MemoryEntry.objects.get().recall_count == 1
    audited = AuditEvent.objects.filter(action__startswith="tool.").values_list("action", "actor")
    assert sorted(audited) == [
        ("tool.append_messages", "agent:acme/alice"),
        ("tool.remember", "agent:acme/alice"),
    ]


def test_another_agents_key_cannot_reach_the_thread(live_server, alice):
    bob = make_actor("acme", "bob")
    thread = alice.new_thread(channel="cli", external_id="t1")

    async def work(client):
        by_id = await client.call_tool("get_context", {"thread_id": thread["id"]})
        by_chat = await client.call_tool("plan_get", {"channel": "cli", "external_id": "t1"})
        write = await client.call_tool(
            "append_messages",
            {"thread_id": thread["id"], "messages": [{"role": "user", "content": "hi"}]},
        )
        return by_id, by_chat, write

    results = mcp_run(live_server.url, bob.key, work)

    assert [result.is_error for result in results] == [True, True, True]
    assert results[0].content[0].text == "No such thread."
    assert "No thread with channel 'cli'" in results[1].content[0].text
    assert Message.objects.count() == 0


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ({}, "Name the thread: give thread_id, or channel and external_id."),
        ({"thread_id": "nope"}, "arguments.thread_id: "),
        ({"channel": "cli", "external_id": "t", "max_tokens": 5}, "arguments.max_tokens: "),
        ({"channel": "cli", "external_id": "t", "colour": "red"}, "arguments.colour: Extra"),
    ],
)
def test_bad_arguments_get_a_tool_error_that_says_what_to_fix(live_server, alice, arguments, says):
    async def work(client):
        return await client.call_tool("get_context", arguments)

    result = mcp_run(live_server.url, alice.key, work)

    assert result.is_error
    assert says in result.content[0].text


def test_a_nan_in_the_arguments_is_a_tool_error_naming_the_argument(live_server, alice):
    thread = alice.new_thread()["id"]
    arguments = {"thread_id": thread, "messages": [{"role": "tool", "payload": {"v": NAN}}]}
    # The SDK's client would send NaN as null; a client in another language may send it as is.
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "append_messages", "arguments": arguments},
    }

    response = post_raw(f"{live_server.url}/mcp", alice.key, content=json.dumps(body))

    assert response.status_code == 200, response.text
    result = response.json()["result"]
    assert result["isError"] is True
    assert result["content"][0]["text"] == (
        "arguments.messages[0].payload.v: NaN is not a JSON number; send a finite number."
    )
    assert not Message.objects.exists()


@pytest.mark.parametrize(
    "body, says",
    [
        # Read by the SDK as notifications: a 202, and the call was dropped without a word.
        ({"jsonrpc": "2.0", "id": {"a": 1}, "method": "tools/list"}, "id: must be a string"),
        ({"jsonrpc": "2.0", "id": [1], "method": "tools/list"}, "id: must be a string"),
        ({"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"}, "id: must be a string"),
        ({"jsonrpc": "2.0", "id": True, "method": "tools/list"}, "id: must be a string"),
        ({"jsonrpc": "1.0", "id": 1, "method": "tools/list"}, 'jsonrpc: must be "2.0"'),
        ({"id": 1, "method": "tools/list"}, 'jsonrpc: must be "2.0"'),
        ({"jsonrpc": "2.0", "id": 1, "method": 5}, "method: must be a string"),
        ([{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}], "send one JSON-RPC message"),
        ({"jsonrpc": "2.0", "id": 1}, "method: required"),
        ({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": []}, "params: must be"),
        # Ignored by the SDK, where a REST body's unknown field is refused.
        (
            {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "extra": True},
            "extra: not a member of a JSON-RPC message",
        ),
        # A request without an id: the SDK took it for a notification and dropped the call.
        (
            {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "recall_memory"}},
            "id: required; tools/call is a request",
        ),
        (
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {}},
            "params.name: required",
        ),
        ({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": 5}}, "params.name"),
        (
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "x", "arguments": [1]},
            },
            "params.arguments: must be an object",
        ),
        (
            {"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": 5}},
            "params.uri",
        ),
        (
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "x", "argument": {"query": "q"}},
            },
            "params.argument: not a member of tools/call's params (_meta, arguments, ",
        ),
        (
            {"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": "u", "x": 1}},
            "params.x: not a member of resources/read's params",
        ),
    ],
)
def test_a_malformed_message_is_an_invalid_request_naming_what_to_fix(
    live_server, alice, body, says
):
    response = post_raw(f"{live_server.url}/mcp", alice.key, content=json.dumps(body))

    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == -32600
    assert error["message"].startswith(f"Invalid request: {says}")
    # Answered under the request's id when it has a valid one, so a client can match it.
    sent = body.get("id") if isinstance(body, dict) else None
    valid = isinstance(sent, str | int) and not isinstance(sent, bool)
    assert response.json()["id"] == (sent if valid else None)


@pytest.mark.parametrize(
    "body",
    [
        '{"jsonrpc": "2.0", "id": 1, "id": 2, "method": "tools/list"}',
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "append_messages",'
        ' "arguments": {"thread_id": "%s", "messages": [{"role": "user", "content": "hi",'
        ' "metadata": {"a": 1, "a": 2}}]}}}',
    ],
)
def test_a_key_repeated_in_one_object_is_an_invalid_request(live_server, alice, body):
    thread = alice.new_thread()["id"]

    response = post_raw(f"{live_server.url}/mcp", alice.key, content=body.replace("%s", thread))

    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == -32600
    assert "appears 2 times in one object; send it once" in error["message"]
    assert not Message.objects.exists()
    # A repeated id is no id to answer under; a key repeated elsewhere leaves the id readable.
    assert response.json()["id"] == (None if '"id": 2' in body else 1)


def test_a_message_nested_thousands_deep_is_an_invalid_request_not_a_500(live_server, alice):
    body = '{"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {"x": ' + "[" * 100_000

    response = post_raw(f"{live_server.url}/mcp", alice.key, content=body + "]" * 100_000 + "}}")

    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == -32600
    assert "nests too deeply" in error["message"]


def test_a_string_id_is_answered_under_it(live_server, alice):
    body = {"jsonrpc": "2.0", "id": "req-1", "method": "tools/list"}

    response = post_raw(f"{live_server.url}/mcp", alice.key, content=json.dumps(body))

    assert response.status_code == 200, response.text
    assert response.json()["id"] == "req-1"
    assert "tools" in response.json()["result"]


def test_an_unknown_tool_is_a_tool_error_naming_the_tools(live_server, alice):
    async def work(client):
        return await client.call_tool("forget_everything", {})

    result = mcp_run(live_server.url, alice.key, work)

    assert result.is_error and "the tools are: get_context" in result.content[0].text


def test_mcp_tool_calls_are_counted_in_the_metrics(live_server, alice):
    def count(tool, outcome) -> float:
        labels = {"tool": tool, "outcome": outcome}
        return REGISTRY.get_sample_value("memory_console_tool_calls_total", labels) or 0.0

    before = {(t, o): count(t, o) for t, o in [("recall_memory", "ok"), ("get_context", "refused")]}

    async def work(client):
        await client.call_tool("recall_memory", {"query": "locker"})
        await client.call_tool("get_context", {"max_tokens": "lots"})

    mcp_run(live_server.url, alice.key, work)

    assert count("recall_memory", "ok") == before[("recall_memory", "ok")] + 1
    assert count("get_context", "refused") == before[("get_context", "refused")] + 1


@pytest.mark.parametrize("header", [None, "Bearer", "Token abc", "Bearer mc_wrong"])
def test_it_refuses_a_missing_or_bad_key(live_server, alice, header):
    headers = {"Authorization": header} if header else {}
    response = httpx2.post(
        f"{live_server.url}/mcp",
        headers={**headers, "Accept": "application/json, text/event-stream"},
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
    )

    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"].startswith("Bearer")
    assert response.json()["error"]["code"] == "not_authenticated"


def test_it_refuses_a_revoked_key(live_server, alice):
    async def work(client):
        return await client.list_tools()

    assert mcp_run(live_server.url, alice.key, work).tools  # the key works until revoked
    api_key_revoke(api_key=alice.agent.api_keys.get(), actor="test")

    response = httpx2.post(
        f"{live_server.url}/mcp",
        headers={
            "Authorization": f"Bearer {alice.key}",
            "Accept": "application/json, text/event-stream",
        },
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
    )

    assert response.status_code == 401
    assert "revoked" in response.json()["error"]["message"]


def test_get_answers_405_in_stateless_mode(live_server, alice):
    response = httpx2.get(
        f"{live_server.url}/mcp", headers={"Authorization": f"Bearer {alice.key}"}
    )

    assert response.status_code == 405 and response.headers["Allow"] == "POST"


def test_it_tells_the_project_version_in_server_info(live_server, alice, settings):
    async def work(client):
        return client.server_info

    server_info = mcp_run(live_server.url, alice.key, work)

    assert server_info.name == "memory-console"
    assert server_info.version == settings.APP_VERSION != ""


def test_it_serves_the_same_endpoint_with_a_trailing_slash(live_server, alice):
    response = post_raw(
        f"{live_server.url}/mcp/",
        alice.key,
        content=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    )

    assert response.status_code == 200, response.text
    assert "remember" in {tool["name"] for tool in response.json()["result"]["tools"]}


@pytest.mark.parametrize("host", ["[::1]:8000", "[::1]", "127.0.0.1:8000"])
def test_it_answers_any_allowed_host_header_ipv6_literals_included(client, alice, host):
    response = client.post(
        "/mcp",
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        content_type="application/json",
        HTTP_HOST=host,
        HTTP_AUTHORIZATION=f"Bearer {alice.key}",
        HTTP_ACCEPT="application/json, text/event-stream",
        HTTP_MCP_PROTOCOL_VERSION="2025-06-18",
    )

    assert response.status_code == 200, response.content
    assert response.json()["result"]["tools"]


@pytest.mark.parametrize("version", ["1999-01-01", "latest"])
def test_an_unknown_protocol_version_is_refused_naming_the_header(live_server, alice, version):
    response = httpx2.post(
        f"{live_server.url}/mcp",
        headers={
            "Authorization": f"Bearer {alice.key}",
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "MCP-Protocol-Version": version,
        },
        content=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}),
    )

    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == -32022
    assert error["message"].startswith(f"MCP-Protocol-Version: '{version}' is not a protocol")
    assert "2025-06-18" in error["message"]


def test_a_server_failure_in_a_tool_is_an_internal_error_that_leaks_nothing(
    live_server, alice, monkeypatch
):
    def failing(**kwargs):
        raise RuntimeError("FOREIGN KEY constraint failed")

    monkeypatch.setattr("apps.agenttools.mcp_server.tool_call", failing)
    body = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "recall_memory", "arguments": {"query": "tea"}},
    }

    response = post_raw(f"{live_server.url}/mcp", alice.key, content=json.dumps(body))

    error = response.json()["error"]
    assert (error["code"], error["message"]) == (-32603, "The server failed; the error was logged.")
    assert "FOREIGN KEY" not in response.text


def test_a_query_parameter_is_an_invalid_request_naming_it(live_server, alice):
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}

    response = post_raw(f"{live_server.url}/mcp?x=1", alice.key, content=json.dumps(body))

    assert response.status_code == 400
    assert response.json()["error"]["message"] == (
        "Invalid request: x: /mcp takes no query parameters."
    )
