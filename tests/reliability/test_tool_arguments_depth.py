"""Tool arguments nested past the request body's limit are a 400, however they are sent.

`arguments` may be the JSON text a model wrote, which the body's parser never sees into: nested
about 5,000 deep it ran json.loads out of stack, a 500 (RecursionError).
"""

import pytest


def nested(depth: int) -> str:
    return '{"content": ' + "[" * depth + "]" * depth + "}"


@pytest.mark.parametrize("depth", [101, 1_000, 5_000, 50_000])
def test_it_refuses_arguments_text_nested_past_the_limit(alice, depth):
    response = alice.post("/api/v1/tools/call", {"name": "remember", "arguments": nested(depth)})

    assert response.status_code == 400, response.content[:300]
    error = response.json()["error"]
    assert error["message"].startswith("arguments: nests more than 100 levels deep")


def test_it_refuses_an_arguments_object_nested_past_the_limit(alice):
    body = '{"name": "remember", "arguments": ' + nested(150) + "}"

    response = alice.client.post("/api/v1/tools/call", body, content_type="application/json")

    assert response.status_code == 400, response.content[:300]
    assert response.json()["error"]["message"].startswith("arguments: nests more than 100")


def test_arguments_within_the_limit_reach_the_tool(alice):
    response = alice.post("/api/v1/tools/call", {"name": "remember", "arguments": nested(99)})

    assert response.status_code == 400
    assert response.json()["error"]["message"].startswith("arguments.content: Input should be")
