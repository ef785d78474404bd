"""POST/GET /threads/{id}/context: the blocks, the recent window, budgets and bad input."""

import pytest

from tests.context.conftest import block, context, talk

BLOCK_ORDER = [
    "user_profile",
    "session_memory",
    "observations",
    "memory",
    "knowledge",
    "notes",
    "recall",
    "recent",
]


def test_it_answers_the_blocks_in_their_fixed_order_and_the_recent_messages(alice):
    thread = alice.new_thread(resource_id="ann")
    talk(alice, thread["id"], "hello", "hi, how can I help?", "where is my parcel?")

    answer = context(alice, thread["id"])

    assert [b["name"] for b in answer["blocks"]] == BLOCK_ORDER
    assert answer["thread_id"] == thread["id"] and answer["resource_id"] == "ann"
    assert [(m["seq"], m["role"], m["content"]) for m in answer["messages"]] == [
        (1, "user", "hello"),
        (2, "assistant", "hi, how can I help?"),
        (3, "user", "where is my parcel?"),
    ]
    assert answer["tokens"] == sum(b["tokens"] for b in answer["blocks"])
    assert block(answer, "recent")["items"][0] == {
        "type": "message",
        "id": answer["blocks"][-1]["items"][0]["id"],
        "seq": 1,
        "score": None,
    }


def test_tool_steps_come_back_ready_for_a_chat_call(alice):
    thread = alice.new_thread()
    alice.append(
        thread["id"],
        {"role": "user", "content": "weather in Oslo?"},
        {"role": "assistant", "kind": "tool_call", "name": "weather", "payload": {"city": "Oslo"}},
        {"role": "tool", "kind": "tool_result", "name": "weather", "payload": {"temp": -3}},
    )

    messages = context(alice, thread["id"])["messages"]

    assert messages[1] == {
        "role": "assistant",
        "content": "",
        "name": "weather",
        "kind": "tool_call",
        "payload": {"city": "Oslo"},
        "seq": 2,
    }
    assert messages[2]["payload"] == {"temp": -3}


def test_without_observations_or_summary_recent_window_sets_the_messages(alice, configure):
    configure(alice, context_strategy="none")
    thread = alice.new_thread()
    talk(alice, thread["id"], *[f"message {n}" for n in range(30)])

    assert len(context(alice, thread["id"])["messages"]) == 20  # the default
    configure(alice, context_strategy="none", recent_window=3)

    assert [m["seq"] for m in context(alice, thread["id"])["messages"]] == [28, 29, 30]


def test_messages_no_observation_holds_yet_come_along_beyond_the_window(alice, configure):
    configure(alice, recent_window=3)
    thread = alice.new_thread()
    talk(alice, thread["id"], *[f"message {n}" for n in range(30)])

    messages = context(alice, thread["id"])["messages"]

    assert [m["seq"] for m in messages] == list(range(1, 31))  # nothing is observed yet


def test_the_same_request_twice_gives_the_same_text(alice, remember, configure):
    remember(alice, "Ann prefers the morning ferry to Tromsø")
    configure(alice, context_strategy="none", semantic_recall_enabled=True, recent_window=2)
    thread = alice.new_thread(resource_id="ann")
    talk(alice, thread["id"], "the ferry to Tromsø", "noted", "book it", "done", "which ferry?")

    first = context(alice, thread["id"], query="ferry Tromsø")
    second = context(alice, thread["id"], query="ferry Tromsø")

    assert first["system_prompt"] == second["system_prompt"] != ""
    assert first["messages"] == second["messages"]
    assert first["context_id"] != second["context_id"]


def test_the_query_defaults_to_the_latest_user_message(alice, remember):
    remember(alice, "The invoice address moved to Bergen")
    remember(alice, "The parcel went to the wrong depot")
    thread = alice.new_thread(resource_id="ann")
    talk(alice, thread["id"], "what about my invoice address?", "let me check")

    memory = block(context(alice, thread["id"]), "memory")

    assert "invoice address moved to Bergen" in memory["text"]
    assert "wrong depot" not in memory["text"]


@pytest.mark.parametrize(
    "body, field",
    [
        ({"max_tokens": 10}, "max_tokens"),
        ({"max_tokens": 10_000_000}, "max_tokens"),
        ({"max_tokens": "lots"}, "max_tokens"),
        ({"query": "x" * 2001}, "query"),
        ({"budget": 100}, "budget"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(alice, body, field):
    thread = alice.new_thread()

    posted = alice.post(f"/api/v1/threads/{thread['id']}/context", body)
    got = alice.get(f"/api/v1/threads/{thread['id']}/context", body)

    for response in (posted, got):
        assert response.status_code == 400
        assert field in response.json()["error"]["details"]


def test_get_takes_the_query_and_budget_as_parameters(alice):
    thread = alice.new_thread()
    talk(alice, thread["id"], "hello there")

    response = alice.get(
        f"/api/v1/threads/{thread['id']}/context", {"query": "hello", "max_tokens": 500}
    )

    assert response.status_code == 200
    assert response.json()["max_tokens"] == 500


def test_the_budget_defaults_to_the_context_max_tokens_setting(alice, configure):
    thread = alice.new_thread()
    talk(alice, thread["id"], "hello")
    assert context(alice, thread["id"])["max_tokens"] == 32_000

    configure(alice, context_max_tokens=1000)

    assert context(alice, thread["id"])["max_tokens"] == 1000


def test_another_agents_thread_is_a_404(alice, bob, carol):
    thread = alice.new_thread()

    for outsider in (bob, carol):
        assert outsider.post(f"/api/v1/threads/{thread['id']}/context", {}).status_code == 404
        assert outsider.get(f"/api/v1/threads/{thread['id']}/contexts").status_code == 404
