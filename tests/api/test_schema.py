import os
import re
import uuid

import jsonschema
import pytest

from apps.api.schema import EXTRA_ERRORS
from apps.tenancy.schema import ApiKeyAuthenticationScheme
from tests.api.openapi import operations, path_params


def test_the_schema_is_openapi_3_and_lists_the_v1_contract(client, db):
    schema = client.get("/api/schema/", {"format": "json"}).json()

    assert schema["openapi"].startswith("3.")
    expected = {
        "/api/v1/threads",
        "/api/v1/threads/{thread_id}",
        "/api/v1/threads/{thread_id}/messages",
        "/api/v1/threads/{thread_id}/runs",
        "/api/v1/threads/{thread_id}/plan",
        "/api/v1/threads/{thread_id}/iterations",
        "/api/v1/runs/{run_id}",
        "/api/v1/runs/{run_id}/finish",
        "/api/v1/runs/{run_id}/checkpoints",
        "/api/v1/runs/{run_id}/snapshot",
        "/api/v1/checkpoints/{checkpoint_id}/resume",
        "/api/v1/config",
    }
    assert expected <= set(schema["paths"])


def test_the_schema_declares_the_agent_key_as_an_http_bearer_scheme(client, db):
    schema = client.get("/api/schema/", {"format": "json"}).json()

    scheme = schema["components"]["securitySchemes"][ApiKeyAuthenticationScheme.name]
    assert (scheme["type"], scheme["scheme"]) == ("http", "bearer")
    v1 = [
        operation
        for path, item in schema["paths"].items()
        if path.startswith("/api/v1/")
        for operation in item.values()
    ]
    assert v1
    assert all(op["security"] == [{ApiKeyAuthenticationScheme.name: []}] for op in v1)


def test_the_docs_page_loads_its_assets_locally(client, db):
    page = client.get("/api/docs/")

    assert page.status_code == 200
    html = page.content.decode()
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in html
    # Every asset the page names is served here: no address on another host (a CDN). Not a
    # search for "cdn": the page's random CSRF token held those letters once in a while.
    addresses = re.findall(r"""(?:src|href)\s*=\s*["']([^"']+)""", html)
    assert addresses and all(a.startswith(("/", "#", "data:")) for a in addresses), addresses
    asset = client.get("/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js")
    assert asset.status_code == 200


@pytest.fixture
def schema(client, db) -> dict:
    return client.get("/api/schema/", {"format": "json"}).json()


def _v1_operations(schema):
    return [
        (method, path, operation)
        for method, path, operation in operations(schema)
        if path.startswith("/api/v1/")
    ]


def test_the_error_shape_is_one_shared_component(schema):
    components = schema["components"]["schemas"]

    error = components["Error"]
    assert error["required"] == ["error"]
    assert error["properties"]["error"]["$ref"] == "#/components/schemas/ErrorDetail"
    detail = components["ErrorDetail"]
    assert set(detail["properties"]) == {"code", "message", "details"}
    assert set(detail["required"]) == {"code", "message", "details"}


def test_every_operation_documents_the_4xx_it_can_answer(schema):
    missing = []
    for method, path, operation in _v1_operations(schema):
        expected = {"400", "401", "429"}
        if path_params(path):
            expected.add("404")
        if "requestBody" in operation:
            expected |= {"413", "415"}
        documented = {
            status
            for status, answer in operation["responses"].items()
            if status.startswith("4")
            and answer["content"]["application/json"]["schema"]
            == {"$ref": "#/components/schemas/Error"}
        }
        if expected - documented:
            missing.append(f"{method.upper()} {path}: {sorted(expected - documented)}")

    assert len(_v1_operations(schema)) >= 60
    assert missing == []


def test_the_extra_errors_name_real_operations(schema):
    operation_ids = {operation["operationId"] for _, _, operation in _v1_operations(schema)}

    assert set(EXTRA_ERRORS) <= operation_ids


def test_forgetting_an_end_user_is_documented_as_the_200_with_counts_it_answers(schema, alice):
    documented = schema["paths"]["/api/v1/resources/{resource_id}"]["delete"]["responses"]
    alice.put("/api/v1/resources/cust-1/profile", {"version": 0, "content": "Likes tea."})

    answer = alice.delete("/api/v1/resources/cust-1")

    assert "204" not in documented
    assert documented["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ResourceForgotten"
    }
    assert answer.status_code == 200
    assert answer.json()["deleted"]["profiles"] == 1
    _validate(schema, documented["200"], answer.json())


def _validate(schema: dict, documented: dict, body) -> None:
    """Check body against a documented answer's JSON schema, its $refs resolved."""
    reference = documented["content"]["application/json"]["schema"]
    resolver = {"components": schema["components"], **reference}
    jsonschema.validate(body, resolver)


@pytest.mark.parametrize(
    "status, request_of",
    [
        (401, lambda alice, anonymous: anonymous.get("/api/v1/threads")),
        (400, lambda alice, anonymous: alice.get("/api/v1/threads", {"limit": "x"})),
        (404, lambda alice, anonymous: alice.get(f"/api/v1/threads/{uuid.uuid4()}")),
        (
            409,
            lambda alice, anonymous: alice.put(
                f"/api/v1/threads/{alice.new_thread()['id']}/plan", {"version": 5, "goal": "g"}
            ),
        ),
        (
            413,
            lambda alice, anonymous: alice.client.post(
                "/api/v1/threads", "x" * (9 * 2**20), content_type="application/json"
            ),
        ),
        (
            415,
            lambda alice, anonymous: alice.client.post(
                "/api/v1/threads", "a=b", content_type="application/x-www-form-urlencoded"
            ),
        ),
    ],
)
def test_the_errors_answered_match_the_documented_component(
    schema, alice, anonymous, status, request_of
):
    answer = request_of(alice, anonymous)

    assert answer.status_code == status, answer.content[:300]
    _validate(schema, {"content": {"application/json": {"schema": ERROR_REF}}}, answer.json())


ERROR_REF = {"$ref": "#/components/schemas/Error"}


def test_the_schema_is_generated_without_warnings(db):
    # A warning is a schema that says less than it should: an enum named by a hash
    # ("Status5fcEnum") where two choice sets share a field name, a path id typed as a string.
    from django.core.management import call_command

    call_command("spectacular", "--validate", "--fail-on-warn", "--file", os.devnull)


def test_every_path_id_is_documented_as_a_uuid(client, db):
    schema = client.get("/api/schema/", {"format": "json"}).json()

    ids = [
        parameter
        for item in schema["paths"].values()
        for operation in item.values()
        for parameter in operation.get("parameters", [])
        # resource_id is the end user's own id, any text; the others are the server's UUIDs.
        if parameter["in"] == "path"
        and parameter["name"].endswith("_id")
        and parameter["name"] != "resource_id"
    ]
    assert len(ids) > 20
    for parameter in ids:
        assert parameter["schema"] == {"type": "string", "format": "uuid"}, parameter
