"""GET /api/v1/tools and POST /api/v1/tools/call: one registry, function-calling shaped."""

import json

import jsonschema
import pytest

from apps.audit.models import AuditEvent
from apps.memconfig.services import config_update
from apps.runstate.models import Plan
from apps.threads.models import Message


def call(actor, name, arguments, expect=200):
    response = actor.post("/api/v1/tools/call", {"name": name, "arguments": arguments})
    assert response.status_code == expect, response.content
    return response.json()


def test_the_definitions_are_openai_functions_with_valid_json_schemas(alice):
    response = alice.get("/api/v1/tools")

    assert response.status_code == 200
    tools = response.json()["tools"]
    assert [tool["function"]["name"] for tool in tools] == [
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
    ]
    for tool in tools:
        assert tool["type"] == "function"
        assert tool["function"]["description"]
        schema = tool["function"]["parameters"]
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object" and schema["additionalProperties"] is False


def test_a_valid_call_passes_the_published_schema_and_a_bad_one_fails_both(alice):
    schemas = {
        t["function"]["name"]: t["function"]["parameters"]
        for t in alice.get("/api/v1/tools").json()["tools"]
    }
    good = {"query": "locker", "top_k": 3}
    bad = {"query": "locker", "top_k": 0}

    jsonschema.validate(good, schemas["recall_memory"])
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schemas["recall_memory"])
    assert call(alice, "recall_memory", good)["result"] == {"results": [], "warnings": []}
    error = call(alice, "recall_memory", bad, expect=400)["error"]
    assert error["message"].startswith("arguments.top_k: ")


def test_each_tool_round_trips(alice):
    config_update(agent=alice.agent, changes={"episodic_approval_required": False}, changed_by="t")
    chat = {"channel": "web", "external_id": "c1"}

    appended = call(
        alice,
        "append_messages",
        {**chat, "messages": [{"role": "user", "content": "I prefer tea over coffee."}]},
    )["result"]
    thread_id = appended["thread_id"]
    context = call(alice, "get_context", {"thread_id": thread_id})["result"]
    searched = call(alice, "search_memory", {"query": "tea", "scopes": ["messages"]})["result"]
    remembered = call(
        alice,
        "remember",
        {
            "content": "Prefers tea over coffee.",
            "evidence": "I prefer tea over coffee.",
            "message_id": appended["messages"][0]["id"],
            "source": "user_assertion",
        },
    )["result"]
    recalled = call(alice, "recall_memory", {"query": "tea"})["result"]
    empty_plan = call(alice, "plan_get", chat)["result"]
    updated = call(
        alice,
        "plan_update",
        {**chat, "version": 0, "goal": "Order drinks", "steps": [{"title": "Ask"}]},
    )["result"]
    stale = call(alice, "plan_update", {**chat, "version": 0, "goal": "x"}, expect=409)

    assert appended["messages"][0]["seq"] == 1
    assert context["messages"][0]["content"] == "I prefer tea over coffee."
    assert [hit["id"] for hit in searched["results"]] == [appended["messages"][0]["id"]]
    assert remembered["status"] == "approved"
    assert recalled["results"][0]["id"] == remembered["id"]
    assert empty_plan["version"] == 0
    assert updated["version"] == 1 and updated["steps"] == [{"title": "Ask", "status": "pending"}]
    assert Plan.objects.get().goal == "Order drinks"
    assert stale["error"]["details"] == {"current_version": 1}
    actions = list(AuditEvent.objects.filter(object_type="tool").values_list("action", flat=True))
    assert sorted(actions) == ["tool.append_messages", "tool.plan_update", "tool.remember"]


def test_search_memory_applies_the_similarity_floor(alice, use_embedder):
    thread = alice.new_thread()
    texts = ["the espresso machine is leaking water", "quarterly revenue grew in the north"]
    alice.append(thread["id"], *({"role": "user", "content": text} for text in texts))
    use_embedder(alice)()
    # A made-up word: only the vectors (hashed trigrams) find anything for it.
    query = {"query": "espressomachine", "top_k": 10}

    open_floor = call(alice, "search_memory", {**query, "min_similarity": 0.0})["result"]
    high_floor = call(alice, "search_memory", {**query, "min_similarity": 0.99})["result"]

    assert open_floor["results"][0]["content"] == texts[0]
    assert high_floor["results"] == []


def test_arguments_may_come_as_the_json_text_a_model_writes(alice):
    arguments = json.dumps({"query": "anything"})

    assert call(alice, "recall_memory", arguments)["result"]["results"] == []


@pytest.mark.parametrize(
    ("name", "arguments", "says"),
    [
        ("nope", {}, "No tool 'nope'; the tools are: get_context"),
        ("recall_memory", "{not json", "arguments: not valid JSON"),
        (
            "recall_memory",
            '{"query": "a", "query": "b"}',
            "arguments: the key 'query' appears 2 times in one object; send it once.",
        ),
        ("recall_memory", [1], "arguments: must be a JSON object"),
        ("recall_memory", {}, "arguments.query: Field required"),
        (
            "append_messages",
            {"external_id": "x", "messages": [{"role": "robot"}]},
            "arguments.messages[0].role: Input should be",
        ),
        (
            "append_messages",
            {"external_id": "x", "messages": [{"role": "user", "content": "a\u0000b"}]},
            "arguments.messages[0].content: Value error, The text contains the NUL",
        ),
        ("plan_update", {"thread_id": "x", "version": -1}, "arguments.thread_id: "),
        (
            "remember",
            {"content": "x", "source": "user_assertion"},
            "evidence: required for source 'user_assertion'",
        ),
    ],
)
def test_bad_arguments_answer_400_naming_the_argument(alice, name, arguments, says):
    error = call(alice, name, arguments, expect=400)["error"]

    assert error["message"].startswith(says), error["message"]


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity"])
def test_a_nan_or_infinity_in_the_json_text_is_a_400_naming_the_argument(alice, number):
    thread = alice.new_thread()["id"]
    # json.dumps writes float("nan") as NaN, as a model's JSON text may hold it.
    arguments = json.dumps(
        {
            "thread_id": thread,
            "messages": [{"role": "tool", "content": "x", "payload": {"v": [1, float(number)]}}],
        }
    )

    error = call(alice, "append_messages", arguments, expect=400)["error"]

    assert error["code"] == "invalid"
    assert error["message"] == (
        f"arguments.messages[0].payload.v[1]: {number} is not a JSON number; send a finite number."
    )
    assert not Message.objects.exists()


def test_it_remembers_without_evidence_as_the_episodic_api_does(alice):
    remembered = call(alice, "remember", {"content": "Prefers aisle seats."})["result"]
    posted = alice.post("/api/v1/episodic", {"content": "Travels with a bicycle."})

    assert remembered["created"] is True and remembered["status"] == "pending"
    assert posted.status_code == 201 and posted.json()["status"] == "pending"
    definition = next(
        tool["function"]
        for tool in alice.get("/api/v1/tools").json()["tools"]
        if tool["function"]["name"] == "remember"
    )
    assert definition["parameters"]["required"] == ["content"]


def test_another_agents_thread_is_not_found(alice, bob):
    thread = alice.new_thread(channel="web", external_id="c1")

    for name, arguments in [
        ("get_context", {"thread_id": thread["id"]}),
        ("plan_get", {"thread_id": thread["id"]}),
        ("append_messages", {"thread_id": thread["id"], "messages": [{"role": "user"}]}),
    ]:
        assert call(bob, name, arguments, expect=404)["error"]["code"] == "not_found"
    # By chat id, bob has no such thread (and append_messages would make his own).
    assert call(bob, "plan_get", {"channel": "web", "external_id": "c1"}, expect=404)


def test_append_messages_refuses_a_user_turn_that_says_nothing(alice):
    thread = alice.new_thread()

    error = call(
        alice,
        "append_messages",
        {
            "thread_id": thread["id"],
            "messages": [{"role": "user", "content": "hi"}, {"role": "user"}],
        },
        expect=400,
    )["error"]

    assert error["message"].startswith("messages[1].content: A user message needs content")
    assert alice.get(f"/api/v1/threads/{thread['id']}").json()["last_seq"] == 0
    # Named by its chat, the thread the call would have created is not left behind.
    named = {"channel": "web", "external_id": "new-chat", "messages": [{"role": "user"}]}
    call(alice, "append_messages", named, expect=400)
    listed = alice.get("/api/v1/threads", {"channel": "web"}).json()["results"]
    assert listed == []


def test_remember_refuses_another_agents_message(alice, bob):
    thread = alice.new_thread()
    message = alice.append(thread["id"], {"role": "user", "content": "secret"})[0]

    error = call(
        bob,
        "remember",
        {"content": "x", "evidence": "secret", "message_id": message["id"]},
        expect=422,
    )["error"]

    assert "is not a message of yours" in error["message"]


def test_it_needs_an_api_key(anonymous, db):
    assert anonymous.get("/api/v1/tools").status_code == 401
    assert (
        anonymous.post("/api/v1/tools/call", {"name": "plan_get"}, format="json").status_code == 401
    )


def test_the_notes_tools_round_trip_and_keep_personal_notes_personal(alice, bob):
    written = call(alice, "note_write", {"path": "todo.md", "content": "Call the plumber."})
    read = call(alice, "note_read", {"path": "todo.md"})["result"]
    found = call(alice, "note_search", {"query": "plumber"})["result"]

    assert read["id"] == written["result"]["id"] and read["version"] == 1
    assert [hit["path"] for hit in found["results"]] == ["todo.md"]
    assert call(bob, "note_read", {"path": "todo.md"}, expect=404)["error"]["message"] == (
        "No note at path 'todo.md'."
    )
    assert call(bob, "note_search", {"query": "plumber"})["result"] == {"results": []}
    assert AuditEvent.objects.filter(action="tool.note_write").count() == 1


@pytest.mark.parametrize(
    ("name", "arguments", "argument"),
    [
        ("recall_memory", {"query": "a", "top_k": "5"}, "top_k"),
        ("recall_memory", {"query": "a", "top_k": 5.0}, "top_k"),
        ("recall_memory", {"query": "a", "top_k": True}, "top_k"),
        ("get_context", {"external_id": "x", "max_tokens": 4000.0}, "max_tokens"),
        ("search_memory", {"query": "a", "min_similarity": "0.5"}, "min_similarity"),
        ("search_memory", {"query": "a", "min_similarity": True}, "min_similarity"),
        ("note_write", {"path": "a.md", "content": "x", "version": "0"}, "version"),
        ("note_search", {"query": "a", "top_k": "5"}, "top_k"),
    ],
)
def test_a_number_sent_as_text_or_a_boolean_is_refused(alice, name, arguments, argument):
    error = call(alice, name, arguments, expect=400)["error"]

    assert error["message"].startswith(f"arguments.{argument}: Input should be a valid")


def test_a_plan_version_of_true_is_refused_and_the_plan_kept(alice):
    chat = {"thread_id": alice.new_thread()["id"]}
    call(alice, "plan_update", {**chat, "version": 0, "goal": "first"})

    error = call(alice, "plan_update", {**chat, "version": True, "goal": "over"}, expect=400)

    assert error["error"]["message"].startswith("arguments.version: Input should be a valid")
    plan = call(alice, "plan_get", chat)["result"]
    assert (plan["version"], plan["goal"]) == (1, "first")
