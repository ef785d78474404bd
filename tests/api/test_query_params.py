"""A query parameter the server cannot use is a 400 naming it, as a body field would be.

PostgreSQL fails on a NUL in any query it is given, so these were 500s there.
"""

import pytest

from tests.api.conftest import admin_of
from tests.api.openapi import fill_path, operations
from tests.api.test_isolation_matrix import _schema as api_schema
from tests.api.test_isolation_matrix import _victim_objects as victim_objects

# Each API list and a query parameter it filters by; {thread} is filled in with alice's thread.
FILTERS = [
    ("/api/v1/threads", "channel"),
    ("/api/v1/threads", "resource_id"),
    ("/api/v1/threads/{thread}/iterations", "task"),
    ("/api/v1/episodic", "resource_id"),
]

# Raw, percent-encoded values, and what the error says about each.
BAD_VALUES = [
    pytest.param("%00", "NUL character", id="nul"),
    pytest.param("a%00b", "NUL character", id="nul-inside"),
    pytest.param("%ED%A0%80", "not valid UTF-8", id="lone-surrogate"),  # \ud800 as bytes
    pytest.param("%ED%BF%BF", "not valid UTF-8", id="lone-low-surrogate"),  # \udfff
    pytest.param("%FF", "not valid UTF-8", id="not-utf8"),
]


@pytest.fixture
def thread(alice) -> str:
    return alice.new_thread(channel="télégram", external_id="1", resource_id="cust-1")["id"]


@pytest.mark.parametrize("path, name", FILTERS)
@pytest.mark.parametrize("raw, said", BAD_VALUES)
def test_it_refuses_a_query_parameter_it_cannot_use_naming_it(alice, thread, path, name, raw, said):
    response = alice.get(f"{path.format(thread=thread)}?limit=5&{name}={raw}")

    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert error["message"].startswith(f"{name}: The query parameter")
    assert said in error["message"]
    assert list(error["details"]) == [name]


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("/api/v1/threads", "limit"),
        ("/api/v1/threads/{thread}/messages", "after_seq"),
        ("/api/v1/threads/{thread}/context", "max_tokens"),
    ],
)
@pytest.mark.parametrize("raw", ["1_000", "%2B2000", "%202000%20", "%EF%BC%93%EF%BC%90%EF%BC%90"])
def test_a_number_is_written_with_the_digits_0_to_9(alice, thread, path, name, raw):
    # int() would read 1_000, +2000, " 2000 " and full-width digits alike.
    response = alice.get(f"{path.format(thread=thread)}?{name}={raw}")

    assert response.status_code == 400, (raw, response.content)
    assert list(response.json()["error"]["details"]) == [name]


def test_it_names_a_parameter_whose_own_name_holds_a_nul(alice):
    response = alice.get("/api/v1/threads?chan%00nel=web")

    assert response.status_code == 400
    assert response.json()["error"]["message"].startswith(
        "'chan\\x00nel': The query parameter's name contains the NUL character"
    )


def test_it_still_filters_by_a_value_outside_ascii(alice, thread):
    response = alice.get("/api/v1/threads", {"channel": "télégram", "resource_id": "cust-1"})

    assert response.status_code == 200
    assert [t["id"] for t in response.json()["results"]] == [thread]


def _gets(schema: dict):
    """Each GET operation of the schema: its path, and its query parameters by name."""
    for method, path, operation in operations(schema):
        if method == "get":
            query = [p for p in operation.get("parameters", []) if p["in"] == "query"]
            yield path, {parameter["name"]: parameter["schema"] for parameter in query}


def _example(schema: dict) -> str:
    if "enum" in schema:
        return str(schema["enum"][0])
    return "1" if schema.get("type") == "integer" else "x"


@pytest.fixture
def every_get(alice):
    """Each GET of the schema as a URL of alice's objects, its documented query parameters,
    and a project-admin client of alice's (which may call them all)."""
    admin = admin_of(alice)
    webhook = {"name": "NOTIFY", "url": "https://93.184.216.34/r"}  # a public address: no DNS
    objects = {
        **victim_objects(alice),  # one of every object an agent's path names, alice's here
        "webhook_id": admin.post("/api/v1/webhooks", webhook, format="json").json()["id"],
    }
    return [
        (fill_path(path, objects), documented) for path, documented in _gets(api_schema())
    ], admin


def test_every_get_refuses_a_query_parameter_it_does_not_take_naming_it(every_get):
    gets, client = every_get

    for url, documented in gets:
        response = client.get(url, {"colour": "red", "format": "json"})

        assert response.status_code == 400, (url, response.content)
        error = response.json()["error"]
        assert error["code"] == "invalid"
        said, _, takes = error["message"].partition(". ")
        assert said == "colour: Unknown query parameter", url
        if documented:  # it names what the schema documents (which sorts them by name)
            named = takes.removeprefix("This operation takes: ").removesuffix(".").split(", ")
            assert sorted(named) == sorted(documented), url
        else:
            assert takes == "This operation takes none.", url
        assert list(error["details"]) == ["colour"]
    assert len(gets) >= 30


def test_every_other_method_refuses_any_query_parameter_before_doing_anything(alice):
    admin = admin_of(alice)
    webhook = {"name": "NOTIFY", "url": "https://93.184.216.34/r"}
    objects = {
        **victim_objects(alice),
        "webhook_id": admin.post("/api/v1/webhooks", webhook, format="json").json()["id"],
    }
    sent = 0
    for method, path, _ in operations(api_schema()):
        if method in ("get", "head", "options"):
            continue
        url = f"{fill_path(path, objects)}?top_k=5"
        response = admin.generic(method.upper(), url, "{}", content_type="application/json")

        assert response.status_code == 400, (method, url, response.content)
        # Operations that take no body (DELETE, a reindex, a secret's rotation) do not advise one.
        takes_body = method != "delete" and not path.endswith(("/reindex", "/rotate"))
        advice = ": send its input in the body." if takes_body else "."
        assert response.json()["error"]["message"] == (
            f"top_k: Unknown query parameter. This operation takes none{advice}"
        ), (method, url)
        sent += 1
    assert sent >= 30
    # Nothing was done: every object is still there.
    assert alice.get(f"/api/v1/threads/{objects['thread_id']}").status_code == 200


def _with_webhook(alice, admin) -> dict:
    """The objects every path names, an admin's webhook among them."""
    webhook = {"name": "NOTIFY", "url": "https://93.184.216.34/r"}
    return {
        **victim_objects(alice),
        "webhook_id": admin.post("/api/v1/webhooks", webhook, format="json").json()["id"],
    }


def test_every_operation_without_a_body_refuses_one_before_doing_anything(alice):
    admin = admin_of(alice)
    objects = _with_webhook(alice, admin)
    sent = []
    for method, path, operation in operations(api_schema()):
        if method in ("get", "head", "options") or "requestBody" in operation:
            continue
        url = fill_path(path, objects)
        response = admin.generic(method.upper(), url, '{"version": 99}', "application/json")

        assert response.status_code == 400, (method, url, response.content)
        assert response.json()["error"]["details"] == {
            "body": ["This operation takes no body: send the request without one."]
        }, (method, url)
        sent.append(f"{method} {path}")
    assert len(sent) >= 9, sent
    # Nothing was done: every object is still there.
    assert alice.get(f"/api/v1/threads/{objects['thread_id']}").status_code == 200


def test_every_get_refuses_a_body_it_would_ignore(alice):
    admin = admin_of(alice)
    objects = _with_webhook(alice, admin)
    sent = []
    for method, path, _ in operations(api_schema()):
        if method != "get":
            continue
        url = fill_path(path, objects)
        body = '{"query": "invoice", "max_tokens": 300}'
        response = admin.generic("GET", url, body, "application/json")

        assert response.status_code == 400, (url, response.content)
        assert list(response.json()["error"]["details"]) == ["body"], url
        sent.append(path)
    assert "/api/v1/threads/{thread_id}/context" in sent
    assert len(sent) >= 20, sent


def test_every_get_takes_the_query_parameters_it_documents(every_get):
    gets, client = every_get

    for url, documented in gets:
        params = {name: _example(schema) for name, schema in documented.items()}

        response = client.get(url, {**params, "format": "json"})

        # A made-up value may be refused (cursor=x), but never its parameter's name.
        assert "Unknown query parameter" not in response.content.decode(), (url, params)


def test_every_get_refuses_a_query_parameter_sent_twice_naming_it(every_get):
    gets, client = every_get
    sent = 0
    for url, documented in gets:
        for name, schema in documented.items():
            value = _example(schema)
            response = client.get(f"{url}?{name}={value}&{name}={value}")

            assert response.status_code == 400, (url, name, response.content)
            assert response.json()["error"]["details"] == {name: ["Sent 2 times; send it once."]}
            sent += 1
    assert sent >= 30


def test_a_json_key_sent_twice_in_one_object_is_refused_naming_it(alice, thread):
    for path, body in [
        ("/api/v1/search", '{"query": "invoice", "top_k": 1, "top_k": 50}'),
        (f"/api/v1/threads/{thread}/messages", '{"messages": [{"role": "user", "role": "x"}]}'),
    ]:
        response = alice.client.generic("POST", path, body, content_type="application/json")

        assert response.status_code == 400, response.content
        assert "appears 2 times in one object; send it once" in response.json()["error"]["message"]
    # Nothing was stored.
    assert alice.get(f"/api/v1/threads/{thread}/messages").json()["results"] == []


def test_a_misspelt_filter_is_refused_not_ignored(alice, thread):
    alice.new_thread(channel="web", external_id="2")

    misspelt = alice.get("/api/v1/threads", {"chanel": "web", "limit": 5})
    filtered = alice.get("/api/v1/threads", {"channel": "web", "format": "json"})

    assert misspelt.status_code == 400
    assert misspelt.json()["error"]["message"] == (
        "chanel: Unknown query parameter. This operation takes: resource_id, channel, limit, "
        "cursor."
    )
    assert filtered.status_code == 200 and len(filtered.json()["results"]) == 1


def test_the_context_and_the_briefing_take_drfs_format_too(alice, thread):
    for path in ("context", "briefing"):
        response = alice.get(f"/api/v1/threads/{thread}/{path}", {"format": "json"})

        assert response.status_code == 200, (path, response.content)


def test_a_request_without_a_key_is_told_so_before_its_parameters(anonymous, db):
    response = anonymous.get("/api/v1/threads", {"colour": "red"})

    assert response.status_code == 401


def test_a_format_the_api_does_not_answer_in_is_a_400_naming_format(alice):
    response = alice.get("/api/v1/threads", {"format": "xml"})

    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert response.json()["error"]["details"] == {
        "format": ["'xml' is not a format this API answers in; send json."]
    }
    assert alice.get("/api/schema/", {"format": "json"}).status_code == 200
