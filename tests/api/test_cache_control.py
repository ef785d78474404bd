"""The agents' API answers are never cached: Cache-Control: no-store on each of them."""

import pytest


@pytest.mark.parametrize(
    "method, path, body",
    [
        ("get", "/api/v1/threads", None),
        ("post", "/api/v1/threads", {"resource_id": "cust-1"}),
        ("get", "/api/v1/config", None),
        ("get", "/api/v1/threads/0190f000-0000-7000-8000-000000000000", None),  # a 404
        ("post", "/api/v1/search", {"query": 1}),  # a 400
    ],
)
def test_it_marks_authenticated_answers_no_store(alice, method, path, body):
    response = getattr(alice, method)(path, body)

    assert response.status_code < 500
    assert "no-store" in response["Cache-Control"]


def test_it_marks_mcp_answers_no_store(alice):
    response = alice.client.post(
        "/mcp",
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        format="json",
        HTTP_ACCEPT="application/json, text/event-stream",
        HTTP_MCP_PROTOCOL_VERSION="2025-06-18",
    )

    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]


def test_refusals_before_authentication_are_no_store_too(anonymous, db):
    assert "no-store" in anonymous.get("/api/v1/threads")["Cache-Control"]
    assert "no-store" in anonymous.get("/api/v1/threads?channel=%00")["Cache-Control"]
