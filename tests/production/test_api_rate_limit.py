"""API_RATE_LIMIT: each API key gets so many requests per period, then 429 with Retry-After."""

import os
import subprocess
import sys

import httpx2
import pytest
from django.conf import settings as django_settings
from django.core.cache import cache
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from memory_console.env import env_rate
from tests.conftest import make_actor
from tests.processes import run_async


@pytest.fixture
def limit(settings):
    """Three requests a minute per key, counted afresh."""
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"api_key": "3/min"},
    }
    cache.clear()
    yield
    cache.clear()


def test_it_answers_429_with_retry_after_past_the_limit(limit, alice):
    answers = [alice.get("/api/v1/threads").status_code for _ in range(3)]
    refused = alice.get("/api/v1/threads")

    assert answers == [200, 200, 200]
    assert refused.status_code == 429
    assert 0 < int(refused["Retry-After"]) <= 60
    assert refused.json()["error"]["code"] == "throttled"


def test_it_counts_each_key_on_its_own(limit, alice):
    second_key = make_actor("acme", "alice")  # another key of the same agent
    for _ in range(3):
        alice.get("/api/v1/threads")

    assert alice.get("/api/v1/threads").status_code == 429
    assert second_key.get("/api/v1/threads").status_code == 200


def test_every_method_counts(limit, alice):
    thread = alice.new_thread()
    alice.append(thread["id"], {"role": "user", "content": "hi"})
    alice.get(f"/api/v1/threads/{thread['id']}")

    refused = alice.post("/api/v1/search", {"query": "hi"})
    assert refused.status_code == 429


def test_without_a_rate_nothing_is_limited(alice):
    answers = {alice.get("/api/v1/threads").status_code for _ in range(20)}

    assert answers == {200}


def mcp_post(actor, method: str = "tools/list", params: dict | None = None):
    message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}
    return actor.client.post(
        "/mcp", message, format="json", HTTP_ACCEPT="application/json, text/event-stream"
    )


def test_mcp_requests_count_against_the_same_limit(limit, alice):
    alice.get("/api/v1/threads")
    answers = [mcp_post(alice).status_code for _ in range(2)]
    refused = mcp_post(alice, "tools/call", {"name": "recall_memory", "arguments": {"query": "x"}})

    assert answers == [200, 200]
    assert refused.status_code == 429
    assert 0 < int(refused["Retry-After"]) <= 60
    error = refused.json()["error"]  # a JSON-RPC error, as MCP clients read one
    assert error["code"] == -32029
    assert "throttled" in error["message"]
    assert error["data"]["retry_after"] == int(refused["Retry-After"])
    assert alice.get("/api/v1/threads").status_code == 429  # and MCP counted for REST too


def test_mcp_counts_each_key_on_its_own(limit, alice, bob):
    for _ in range(3):
        mcp_post(alice)

    assert mcp_post(alice).status_code == 429
    assert mcp_post(bob).status_code == 200


def test_mcp_without_a_rate_is_not_limited(alice):
    answers = {mcp_post(alice).status_code for _ in range(20)}

    assert answers == {200}


def test_an_sdk_client_past_the_limit_gets_the_429(limit, live_server, transactional_db):
    carol = make_actor("globex", "carol")

    async def main():
        headers = {"Authorization": f"Bearer {carol.key}"}
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
            transport = streamable_http_client(f"{live_server.url}/mcp", http_client=http)
            async with Client(transport) as client:  # its discovery is the first request
                await client.list_tools()
                await client.call_tool("recall_memory", {"query": "x"})
                return await client.call_tool("recall_memory", {"query": "x"})

    with pytest.raises(ExceptionGroup) as refused:
        run_async(main())

    assert refused.group_contains(MCPError, match="throttled", depth=None)


@pytest.mark.parametrize(
    "value", ["600/min", "5/s", "100/hour", "100/hours", "10000/day", "1/second", "60/minutes"]
)
def test_a_rate_is_read_as_written(monkeypatch, value):
    monkeypatch.setenv("API_RATE_LIMIT", value)

    assert env_rate("API_RATE_LIMIT", "600/min") == value


def test_an_empty_rate_is_no_limit(monkeypatch):
    monkeypatch.setenv("API_RATE_LIMIT", " ")

    assert env_rate("API_RATE_LIMIT", "600/min") is None


@pytest.mark.parametrize(
    "value", ["abc", "10/week", "abc/min", "5 per minute", "5 / min", "-1/min"]
)
def test_a_rate_that_is_no_count_per_period_stops_the_server_at_start_naming_it(value):
    # DRF reads the rate on each request: such a value made every API request a 500 (and a
    # negative count is no rate, though DRF would take one).
    finished = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=django_settings.BASE_DIR,
        env={**os.environ, "API_RATE_LIMIT": value},
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert finished.returncode != 0
    assert "API_RATE_LIMIT must be a number of requests per s, min, hour or day, such as " in (
        finished.stderr
    )
    assert repr(value) in finished.stderr
