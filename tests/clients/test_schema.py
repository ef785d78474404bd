"""The client is current with the API: every operation it calls, every field and parameter it
sends and every key of the answers it types is in the schema `manage.py spectacular` writes."""

import typing

import pytest
from memory_console_client.operations import OPERATIONS, Operation
from memory_console_client.types import RETURNS


@pytest.fixture(scope="module")
def schema(written_schema):
    return written_schema


def resolve(schema: dict, node: dict) -> dict:
    while "$ref" in node:
        node = schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[-1]]
    if "allOf" in node:
        merged = {"properties": {}}
        for part in node["allOf"]:
            merged["properties"].update(resolve(schema, part).get("properties", {}))
        return merged
    return node


def problems(schema: dict, op: Operation) -> list[str]:
    """What of op the schema does not have: its path and method, id, fields, parameters."""
    operation = schema["paths"].get(op.path, {}).get(op.method.lower())
    if operation is None:
        return [f"{op.method} {op.path} is not in the schema"]
    found = []
    if operation["operationId"] != op.id:
        found.append(f"{op.method} {op.path} is {operation['operationId']}, not {op.id}")
    body = operation.get("requestBody", {}).get("content", {}).get("application/json")
    properties = resolve(schema, body["schema"]).get("properties", {}) if body else {}
    found += [f"{op.id}: no body field {name!r}" for name in op.fields if name not in properties]
    params = {p["name"] for p in operation.get("parameters", []) if p["in"] == "query"}
    found += [f"{op.id}: no query parameter {name!r}" for name in op.params if name not in params]
    return found


def answer_keys(schema: dict, operation_id: str) -> set[str]:
    """The keys of one item the operation answers (a list's items, a page's results)."""
    operation = next(
        op
        for item in schema["paths"].values()
        for op in item.values()
        if isinstance(op, dict) and op.get("operationId") == operation_id
    )
    success = next(code for code in ("200", "201") if code in operation["responses"])
    node = operation["responses"][success]["content"]["application/json"]["schema"]
    node = resolve(schema, node)
    properties = node.get("properties", {})
    if "results" in properties:  # a page, or search's answer
        node = resolve(schema, properties["results"]["items"])
    elif set(properties) == {"messages"}:  # an append's answer
        node = resolve(schema, properties["messages"]["items"])
    return set(node["properties"])


def test_every_operation_of_the_client_is_in_the_schema_as_it_calls_it(schema):
    found = [problem for op in OPERATIONS.values() for problem in problems(schema, op)]

    assert found == []
    assert len(OPERATIONS) >= 30


def test_the_check_fails_when_the_api_no_longer_has_what_the_client_sends(schema):
    renamed = Operation("threads_update", "PATCH", "/api/v1/threads/{thread_id}", ("name",))
    moved = Operation("threads_read", "GET", "/api/v1/thread/{thread_id}")
    param = Operation("threads_list", "GET", "/api/v1/threads", params=("colour",))

    assert problems(schema, renamed) == ["threads_update: no body field 'name'"]
    assert problems(schema, moved) == ["GET /api/v1/thread/{thread_id} is not in the schema"]
    assert problems(schema, param) == ["threads_list: no query parameter 'colour'"]


@pytest.mark.parametrize("operation_id", sorted(RETURNS))
def test_every_key_the_client_types_is_in_the_answer(schema, operation_id):
    typed = set(typing.get_type_hints(RETURNS[operation_id]))

    assert typed - answer_keys(schema, operation_id) == set()
