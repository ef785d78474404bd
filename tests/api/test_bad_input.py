"""Input the database cannot hold is a 400 naming the field, never a 500 from the database."""

import json

import pytest

from tests.api.conftest import admin_of

# Each endpoint with a JSON field, the body that puts a value there, and the field's name in the
# error. {thread}, {run} and {checkpoint} are filled with ids made for the test.
JSON_FIELDS = [
    ("post", "/api/v1/threads", lambda v: {"metadata": v}, "metadata"),
    ("patch", "/api/v1/threads/{thread}", lambda v: {"metadata": v}, "metadata"),
    (
        "post",
        "/api/v1/threads/{thread}/messages",
        lambda v: {"messages": [{"role": "user", "content": "hi", "metadata": v}]},
        "messages[0].metadata",
    ),
    (
        "post",
        "/api/v1/threads/{thread}/messages",
        lambda v: {"messages": [{"role": "user", "content": "hi"}, {"role": "tool", "payload": v}]},
        "messages[1].payload",
    ),
    ("post", "/api/v1/threads/{thread}/runs", lambda v: {"metadata": v}, "metadata"),
    (
        "post",
        "/api/v1/runs/{run}/finish",
        lambda v: {"status": "succeeded", "metadata": v},
        "metadata",
    ),
    ("put", "/api/v1/threads/{thread}/plan", lambda v: {"version": 0, "metadata": v}, "metadata"),
    (
        "post",
        "/api/v1/threads/{thread}/iterations",
        lambda v: {"task": "t", "outcome": "failed", "metadata": v},
        "metadata",
    ),
    ("post", "/api/v1/runs/{run}/checkpoints", lambda v: {"state": v}, "state"),
    ("post", "/api/v1/checkpoints/{checkpoint}/resume", lambda v: {"input": v}, "input"),
    ("put", "/api/v1/runs/{run}/snapshot", lambda v: {"tree": v}, "tree"),
]


def nested(levels: int) -> dict:
    """Return a JSON object that is `levels` containers deep."""
    value: dict | list = {}
    for _ in range(levels - 2):
        value = [value]
    return {"deep": value}


# Values the database refuses (or Python cannot encode), where in the value the error names (a
# lone surrogate is refused with the body, at its own place), what it says, and the fix.
UNSTORABLE = [
    pytest.param({"note": "a\u0000b"}, "", "NUL character", "remove it", id="nul-in-text"),
    pytest.param({"a\u0000": 1}, "", "NUL character", "remove it", id="nul-in-key"),
    pytest.param(
        {"deep": [{"x": ["ok", "\ud800"]}]},
        ".deep[0].x[1]",
        "lone UTF-16 surrogate",
        "remove it",
        id="lone-high",
    ),
    pytest.param(
        {"note": "tail \udfff"}, ".note", "lone UTF-16 surrogate", "remove it", id="lone-low"
    ),
    pytest.param({"\udc00": "v"}, "", "lone UTF-16 surrogate", "remove it", id="lone-in-key"),
    # json.dumps writes NaN and the infinities as JavaScript spells them, as some clients do.
    pytest.param(
        {"score": float("nan")}, ".score", "NaN is not a JSON number", "finite number", id="nan"
    ),
    pytest.param(
        {"deep": [1, {"x": float("-inf")}]},
        ".deep[1].x",
        "-Infinity is not a JSON number",
        "finite number",
        id="minus-infinity",
    ),
    pytest.param(nested(101), "", "nests more than 100 levels", "flatten it", id="too-deep"),
    pytest.param(nested(900), "", "nests more than 100 levels", "flatten it", id="far-too-deep"),
]


@pytest.fixture
def ids(alice):
    thread = alice.new_thread()
    run = alice.post(f"/api/v1/threads/{thread['id']}/runs", {}).json()
    checkpoint = alice.post(f"/api/v1/runs/{run['id']}/checkpoints", {"state": {}}).json()
    return {"thread": thread["id"], "run": run["id"], "checkpoint": checkpoint["id"]}


def send(actor, method, path, body):
    # json.dumps escapes lone surrogates as \udXXX, exactly as a client in another language would.
    return actor.client.generic(
        method.upper(), path, json.dumps(body), content_type="application/json"
    )


@pytest.mark.parametrize("value, where, says, fix", UNSTORABLE)
@pytest.mark.parametrize("method, path, body, field", JSON_FIELDS)
def test_it_refuses_json_the_database_cannot_store(
    alice, ids, method, path, body, field, value, where, says, fix
):
    response = send(alice, method, path.format(**ids), body(value))

    assert response.status_code == 400, response.content
    message = response.json()["error"]["message"]
    assert message.startswith(f"{field}{where}: ")
    assert says in message
    assert fix in message


@pytest.mark.parametrize("number", ["1e400", "-2.5E+999"])
def test_a_number_too_large_for_a_double_is_refused_naming_it(alice, ids, number):
    body = f'{{"query": "x", "min_similarity": {number}}}'

    response = alice.client.generic("POST", "/api/v1/search", body, content_type="application/json")

    assert response.status_code == 400, response.content
    assert response.json()["error"]["message"] == (
        f"min_similarity: {number} is too large a number; send one within ±1.7e308."
    )


@pytest.mark.parametrize("number", ["1e-400", "-2.5E-999", "0.000e-500"])
def test_a_number_too_small_for_a_double_is_refused_not_stored_as_0(alice, ids, number):
    body = f'{{"title": "t", "metadata": {{"b": {number}}}}}'

    response = alice.client.generic(
        "POST", "/api/v1/threads", body, content_type="application/json"
    )

    if number.startswith("0.000"):  # a zero written so is a zero
        assert response.status_code == 201, response.content
        assert response.json()["metadata"] == {"b": 0.0}
        return
    assert response.status_code == 400, response.content
    assert response.json()["error"]["message"].startswith(
        f"JSON parse error - {number} is too small a number to keep (it reads as 0)"
    )


def test_an_integer_past_python_s_digit_limit_is_refused_with_a_fix_for_the_client(alice, ids):
    body = '{"title": "t", "metadata": {"n": ' + "9" * 5001 + "}}"

    response = alice.client.generic(
        "POST", "/api/v1/threads", body, content_type="application/json"
    )

    assert response.status_code == 400, response.content
    assert response.json()["error"]["message"] == (
        "JSON parse error - an integer has more than 4300 digits; send it as a string."
    )


def test_a_null_body_is_refused_not_read_as_an_empty_one(alice, ids):
    response = send(alice, "post", f"/api/v1/threads/{ids['thread']}/runs", None)

    assert response.status_code == 400, response.content
    assert response.json()["error"]["message"] == (
        "JSON parse error - the body is null; send a JSON object."
    )


def test_a_body_that_is_only_infinity_is_a_parse_error(alice, ids):
    response = send(alice, "post", "/api/v1/search", float("inf"))

    assert response.status_code == 400, response.content
    assert response.json()["error"]["message"] == (
        "JSON parse error - Infinity is not a JSON number; send a finite number."
    )


@pytest.mark.parametrize("method, path, body, field", JSON_FIELDS)
def test_it_stores_json_with_a_surrogate_pair_and_escaped_control_characters(
    alice, ids, method, path, body, field
):
    value = {"emoji": "\U0001f600", "tab": "a\tb", "escaped": "\\u0000", **nested(100)}

    response = send(alice, method, path.format(**ids), body(value))

    assert response.status_code in (200, 201), response.content


@pytest.mark.parametrize(
    "field, value",
    [
        ("iteration", 3_000_000_000),
        ("iteration", 2_147_483_648),
        ("version", 3_000_000_000),
        ("version", 10**30),
    ],
)
def test_it_refuses_plan_integers_beyond_the_column(alice, ids, field, value):
    url = f"/api/v1/threads/{ids['thread']}/plan"

    response = alice.put(url, {"version": 0, field: value})

    assert response.status_code == 400, response.content
    assert response.json()["error"]["message"] == (
        f"{field}: Ensure this value is less than or equal to 2147483647."
    )


def test_it_accepts_the_largest_plan_iteration(alice, ids):
    url = f"/api/v1/threads/{ids['thread']}/plan"

    response = alice.put(url, {"version": 0, "iteration": 2_147_483_647})

    assert response.status_code == 200, response.content
    assert response.json()["iteration"] == 2_147_483_647


@pytest.mark.parametrize(
    "params, count",
    [({"after_seq": str(2**70)}, 0), ({"before_seq": str(2**70)}, 1)],
)
def test_a_seq_beyond_any_column_reads_as_an_ordinary_bound(alice, ids, params, count):
    alice.append(ids["thread"], {"role": "user", "content": "hi"})

    response = alice.get(f"/api/v1/threads/{ids['thread']}/messages", params)

    assert response.status_code == 200, response.content
    assert len(response.json()["results"]) == count


@pytest.mark.parametrize("text", ["a\u0000b", "a\ud800b"], ids=["nul", "lone-surrogate"])
@pytest.mark.parametrize(
    "method, path, body, field",
    [
        ("post", "/api/v1/threads", lambda t: {"title": t}, "title"),
        (
            "post",
            "/api/v1/threads/{thread}/messages",
            lambda t: {"messages": [{"role": "user", "content": t}]},
            "messages[0].content",
        ),
        ("put", "/api/v1/threads/{thread}/plan", lambda t: {"version": 0, "goal": t}, "goal"),
        ("post", "/api/v1/runs/{run}/finish", lambda t: {"status": "failed", "error": t}, "error"),
    ],
)
def test_it_refuses_text_fields_the_database_cannot_store(
    alice, ids, method, path, body, field, text
):
    response = send(alice, method, path.format(**ids), body(text))

    assert response.status_code == 400, response.content
    assert response.json()["error"]["message"].startswith(f"{field}: ")


# Fields whose error would echo the value they refuse ("... is not a valid choice"), the body
# that puts a value there, the field's name in the error, and whether an admin key sends it.
CHOICE_FIELDS = [
    (
        "post",
        "/api/v1/threads/{thread}/messages",
        lambda v: {"messages": [{"role": "user", "content": "x"}, {"role": v, "content": "x"}]},
        "messages[1].role",
        False,
    ),
    ("post", "/api/v1/episodic", lambda v: {"content": "x", "kind": v}, "kind", False),
    ("post", "/api/v1/episodic", lambda v: {"content": "x", "source": v}, "source", False),
    ("post", "/api/v1/notes", lambda v: {"path": "a.md", "scope": v}, "scope", False),
    (
        "post",
        "/api/v1/threads/{thread}/iterations",
        lambda v: {"task": "t", "outcome": v},
        "outcome",
        False,
    ),
    ("post", "/api/v1/runs/{run}/finish", lambda v: {"status": v}, "status", False),
    (
        "post",
        "/api/v1/search",
        lambda v: {"query": "x", "scopes": ["messages", v]},
        "scopes[1]",
        False,
    ),
    (
        "patch",
        "/api/v1/config",
        lambda v: {"level": v, "version": 0, "values": {"recent_messages": 5}},
        "level",
        True,
    ),
    ("post", "/api/v1/config/rollback", lambda v: {"level": v, "to_version": 0}, "level", True),
]


@pytest.mark.parametrize("text", ["\udcff", "ok \ud800"], ids=["lone-low", "lone-high"])
@pytest.mark.parametrize("method, path, body, field, as_admin", CHOICE_FIELDS)
def test_a_lone_surrogate_is_refused_naming_the_field_not_echoed_into_a_500(
    alice, ids, method, path, body, field, as_admin, text
):
    client = admin_of(alice) if as_admin else alice.client

    response = client.generic(
        method.upper(),
        path.format(**ids),
        json.dumps(body(text)),
        content_type="application/json",
    )

    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert error["message"] == (
        f"{field}: The text contains a lone UTF-16 surrogate (\\ud800-\\udfff), which the "
        "database cannot store; send the full pair or remove it."
    )


def test_a_lone_surrogate_in_a_key_is_refused_naming_where_the_key_is(alice, ids):
    body = {"messages": [{"role": "user", "metadata": {"ok": {"\udc00": 1}}}]}

    response = send(alice, "post", f"/api/v1/threads/{ids['thread']}/messages", body)

    assert response.status_code == 400, response.content
    assert response.json()["error"]["message"].startswith(
        "messages[0].metadata.ok: The key '\\udc00' contains a lone UTF-16 surrogate"
    )


def test_a_body_nested_past_the_parsers_recursion_limit_is_a_400(alice, ids):
    depth = 5000
    body = '{"metadata": ' + "[" * depth + "]" * depth + "}"

    response = alice.client.generic(
        "PATCH", f"/api/v1/threads/{ids['thread']}", body, content_type="application/json"
    )

    assert response.status_code == 400, response.content
    assert "nests too deeply" in response.json()["error"]["message"]


# A value of another JSON type than its field's, where the error names it, and what it says.
WRONG_TYPES = [
    pytest.param(
        "post",
        "/api/v1/threads/{thread}/messages",
        {"messages": [{"role": "user", "content": 123}]},
        "messages[0].content",
        "Expected a string, got a number.",
        id="number-for-text",
    ),
    pytest.param(
        "post",
        "/api/v1/threads",
        {"title": ["a"]},
        "title",
        "Expected a string, got an array.",
        id="array-for-text",
    ),
    pytest.param(
        "post",
        "/api/v1/threads/{thread}/context",
        {"max_tokens": "4000"},
        "max_tokens",
        "Expected an integer, got a string.",
        id="string-for-integer",
    ),
    pytest.param(
        "post",
        "/api/v1/threads/{thread}/context",
        {"max_tokens": 4000.5},
        "max_tokens",
        "Expected an integer, got a number.",
        id="fraction-for-integer",
    ),
    pytest.param(
        "post",
        "/api/v1/runs/{run}/finish",
        {"status": 1},
        "status",
        "Expected a string, got a number.",
        id="number-for-choice",
    ),
    pytest.param(
        "put",
        "/api/v1/threads/{thread}/plan",
        {"version": True},
        "version",
        "Expected an integer, got a boolean.",
        id="boolean-for-integer",
    ),
]


@pytest.mark.parametrize("method, path, body, field, says", WRONG_TYPES)
def test_a_value_of_another_json_type_is_refused_not_converted(
    alice, ids, method, path, body, field, says
):
    before = alice.get(f"/api/v1/threads/{ids['thread']}").json()

    response = send(alice, method, path.format(**ids), body)

    assert response.status_code == 400, response.content
    assert response.json()["error"]["message"] == f"{field}: {says}"
    assert alice.get(f"/api/v1/threads/{ids['thread']}").json() == before


def test_a_list_item_of_another_json_type_is_refused_naming_its_place(alice, ids):
    response = alice.post("/api/v1/search", {"query": "x", "scopes": ["messages", 7]})

    assert response.status_code == 400, response.content
    assert response.json()["error"]["message"] == "scopes[1]: Expected a string, got a number."
