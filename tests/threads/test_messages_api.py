from datetime import UTC, datetime

import pytest
from django.test import override_settings

from apps.threads.models import Message, Thread


def test_it_numbers_appended_messages_from_one(alice):
    thread = alice.new_thread()

    first = alice.append(
        thread["id"], {"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}
    )
    second = alice.append(thread["id"], {"role": "user", "content": "c"})

    assert [m["seq"] for m in first + second] == [1, 2, 3]
    stored = alice.get(f"/api/v1/threads/{thread['id']}").json()
    assert stored["last_seq"] == 3
    assert stored["message_count"] == 3
    assert stored["token_count"] == sum(m["token_count"] for m in first + second)


def test_it_stores_every_kind_with_its_fields(alice):
    thread = alice.new_thread()
    run = alice.post(f"/api/v1/threads/{thread['id']}/runs", {}).json()
    backfilled = "2024-05-01T10:00:00Z"

    [call, result] = alice.append(
        thread["id"],
        {
            "role": "assistant",
            "kind": "tool_call",
            "name": "search",
            "actor": "bot-1",
            "payload": {"query": "weather"},
            "metadata": {"trace": "t1"},
            "run_id": run["id"],
            "created_at": backfilled,
        },
        {"role": "tool", "kind": "tool_result", "name": "search", "content": "sunny"},
    )

    assert call["kind"] == "tool_call"
    assert call["payload"] == {"query": "weather"}
    assert call["actor"] == "bot-1"
    assert call["run_id"] == run["id"]
    assert datetime.fromisoformat(call["created_at"]) == datetime(2024, 5, 1, 10, tzinfo=UTC)
    assert call["token_count"] > 4
    assert result["kind"] == "tool_result"


def test_an_idempotency_key_replays_the_stored_message(alice):
    thread = alice.new_thread()
    message = {"role": "user", "content": "pay invoice 7", "idempotency_key": "evt-1"}
    [first] = alice.append(thread["id"], message)

    response = alice.post(f"/api/v1/threads/{thread['id']}/messages", {"messages": [message]})

    assert response.status_code == 200
    [again] = response.json()["messages"]
    assert again["id"] == first["id"]
    assert again["replayed"] is True
    assert alice.get(f"/api/v1/threads/{thread['id']}").json()["message_count"] == 1


def test_the_same_key_twice_in_one_batch_stores_one_message(alice):
    thread = alice.new_thread()
    message = {"role": "user", "content": "x", "idempotency_key": "k"}

    [a, b] = alice.append(thread["id"], message, message)

    assert a["id"] == b["id"]
    assert (a["replayed"], b["replayed"]) == (False, True)


def test_the_same_key_with_a_different_body_is_a_conflict(alice):
    thread = alice.new_thread()
    alice.append(thread["id"], {"role": "user", "content": "x", "idempotency_key": "k"})

    response = alice.post(
        f"/api/v1/threads/{thread['id']}/messages",
        {"messages": [{"role": "user", "content": "y", "idempotency_key": "k"}]},
    )

    assert response.status_code == 409
    assert response.json()["error"]["details"]["fields"] == ["content"]


def test_a_conflict_stores_nothing_of_the_batch(alice):
    thread = alice.new_thread()
    alice.append(thread["id"], {"role": "user", "content": "x", "idempotency_key": "k"})

    response = alice.post(
        f"/api/v1/threads/{thread['id']}/messages",
        {
            "messages": [
                {"role": "user", "content": "fresh"},
                {"role": "user", "content": "changed", "idempotency_key": "k"},
            ]
        },
    )

    assert response.status_code == 409
    assert alice.get(f"/api/v1/threads/{thread['id']}").json()["last_seq"] == 1


def test_it_pages_messages_by_seq(alice):
    thread = alice.new_thread()
    alice.append(thread["id"], *[{"role": "user", "content": str(i)} for i in range(10)])
    url = f"/api/v1/threads/{thread['id']}/messages"

    first = alice.get(url, {"limit": 4}).json()
    after = alice.get(url, {"after_seq": 4, "limit": 4}).json()
    latest = alice.get(url, {"before_seq": 11, "limit": 3}).json()
    window = alice.get(url, {"after_seq": 2, "before_seq": 5}).json()

    assert [m["seq"] for m in first["results"]] == [1, 2, 3, 4]
    assert first["has_more"] is True
    assert [m["seq"] for m in after["results"]] == [5, 6, 7, 8]
    assert [m["seq"] for m in latest["results"]] == [8, 9, 10]
    assert latest["has_more"] is True
    assert [m["seq"] for m in window["results"]] == [3, 4]
    assert window["has_more"] is False


def test_a_run_of_another_thread_is_refused(alice):
    one, two = alice.new_thread(), alice.new_thread()
    run = alice.post(f"/api/v1/threads/{two['id']}/runs", {}).json()

    response = alice.post(
        f"/api/v1/threads/{one['id']}/messages",
        {"messages": [{"role": "user", "content": "x", "run_id": run["id"]}]},
    )

    assert response.status_code == 422
    assert run["id"] in response.json()["error"]["message"]


@pytest.mark.parametrize(
    "messages, where",
    [
        ([{"role": "robot", "content": "x"}], "messages[0].role"),
        ([{"content": "x"}], "messages[0].role"),
        ([{"role": "user", "kind": "thought"}], "messages[0].kind"),
        ([{"role": "user", "content": 5}], "messages[0].content"),  # not turned into "5"
        ([{"role": "user", "name": True}], "messages[0].name"),
        ([{"role": "user", "content": ["a"]}], "messages[0].content"),
        ([{"role": "user", "metadata": "x"}], "messages[0].metadata"),
        ([{"role": "user", "created_at": "yesterday"}], "messages[0].created_at"),
        ([{"role": "user", "run_id": "not-a-uuid"}], "messages[0].run_id"),
        ([{"role": "user", "idempotency_key": "k" * 201}], "messages[0].idempotency_key"),
        ([{"role": "user"}, {"role": "user", "surprise": 1}], "messages[1].surprise"),
        ([{"role": "user", "content": "hi"}, {"role": "user"}], "messages[1].content"),
        ([{"role": "user", "content": " \n"}], "messages[0].content"),
        ([], "messages"),
        ("not a list", "messages"),
    ],
)
def test_it_rejects_bad_messages_with_the_field_named(alice, messages, where):
    thread = alice.new_thread()

    response = alice.post(f"/api/v1/threads/{thread['id']}/messages", {"messages": messages})

    assert response.status_code == 400
    assert response.json()["error"]["message"].startswith(f"{where}:")
    assert alice.get(f"/api/v1/threads/{thread['id']}").json()["last_seq"] == 0


def test_a_user_turn_needs_content_or_a_payload_and_other_turns_need_neither(alice):
    thread = alice.new_thread()

    stored = alice.append(
        thread["id"],
        {"role": "user", "payload": {"attachment": "receipt.png"}},
        {"role": "assistant", "kind": "tool_call", "name": "lookup", "payload": {"id": 1}},
        {"role": "assistant"},  # an empty reply is the model's to give
    )
    refused = alice.post(
        f"/api/v1/threads/{thread['id']}/messages", {"messages": [{"role": "user"}]}
    )

    assert [message["seq"] for message in stored] == [1, 2, 3]
    assert refused.status_code == 400
    problem = (
        "A user message needs content, what the user said (or a payload, such as an "
        "attachment's description)."
    )
    assert refused.json()["error"]["message"] == f"messages[0].content: {problem}"
    # as the serializer's errors of one message nest (role, kind, ...)
    assert refused.json()["error"]["details"] == {"messages": {"0": {"content": [problem]}}}


def test_a_blank_user_turn_stored_before_is_still_replayed_by_its_key(alice):
    thread = alice.new_thread()
    stored = Message.objects.create(
        thread=Thread.objects.get(pk=thread["id"]),
        seq=1,
        role="user",
        content="",
        idempotency_key="k1",
    )
    Thread.objects.filter(pk=thread["id"]).update(last_seq=1)

    replay = alice.post(
        f"/api/v1/threads/{thread['id']}/messages",
        {"messages": [{"role": "user", "content": "", "idempotency_key": "k1"}]},
    )

    assert replay.status_code == 200, replay.content
    assert replay.json()["messages"][0]["id"] == str(stored.id)
    assert replay.json()["messages"][0]["replayed"] is True


@override_settings(MESSAGE_MAX_CONTENT_CHARS=100)
def test_it_rejects_content_over_the_configured_limit(alice):
    thread = alice.new_thread()

    response = alice.post(
        f"/api/v1/threads/{thread['id']}/messages",
        {"messages": [{"role": "user", "content": "x" * 101}]},
    )

    assert response.status_code == 400
    assert "limit is 100" in response.json()["error"]["message"]


@override_settings(MESSAGE_BATCH_MAX=3)
def test_it_rejects_a_batch_over_the_limit(alice):
    thread = alice.new_thread()

    response = alice.post(
        f"/api/v1/threads/{thread['id']}/messages",
        {"messages": [{"role": "user", "content": "x"}] * 4},
    )

    assert response.status_code == 400
    assert "limit is 3" in response.json()["error"]["message"]


@pytest.mark.parametrize(
    "params", [{"after_seq": "-1"}, {"before_seq": "x"}, {"limit": "0"}, {"limit": "100000"}]
)
def test_it_rejects_bad_paging_parameters(alice, params):
    thread = alice.new_thread()

    response = alice.get(f"/api/v1/threads/{thread['id']}/messages", params)

    assert response.status_code == 400
    assert next(iter(params)) in response.json()["error"]["details"]


@pytest.mark.parametrize(("after", "before"), [(5, 3), (4, 4)])
def test_a_window_that_cannot_hold_a_message_is_a_400_naming_both_bounds(alice, after, before):
    thread = alice.new_thread()
    alice.append(thread["id"], *[{"role": "user", "content": str(i)} for i in range(6)])

    response = alice.get(
        f"/api/v1/threads/{thread['id']}/messages", {"after_seq": after, "before_seq": before}
    )

    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["message"] == (
        f"after_seq, before_seq: No message is after {after} and before {before}; "
        "before_seq must be greater than after_seq."
    )
    assert sorted(error["details"]) == ["after_seq", "before_seq"]


def test_a_window_of_adjacent_bounds_is_empty_not_refused(alice):
    thread = alice.new_thread()
    alice.append(thread["id"], *[{"role": "user", "content": str(i)} for i in range(6)])

    response = alice.get(
        f"/api/v1/threads/{thread['id']}/messages", {"after_seq": 3, "before_seq": 4}
    )

    assert response.status_code == 200
    assert response.json() == {"results": [], "has_more": False}


@pytest.mark.parametrize(
    "created_at", [None, datetime(2024, 5, 1, 12, 30, 15, 250000, tzinfo=UTC)], ids=["now", "set"]
)
def test_an_appended_message_reads_back_as_the_append_answered(alice, created_at):
    thread = alice.new_thread()
    run = alice.post(f"/api/v1/threads/{thread['id']}/runs", {}).json()
    fields = {
        "role": "tool",
        "kind": "tool_result",
        "name": "lookup",
        "actor": "tool-runner",
        "content": "42 rows",
        "payload": {"rows": [1, 2], "ok": True},
        "metadata": {"source": "db"},
        "idempotency_key": "k-1",
        "run_id": run["id"],
    }
    if created_at:
        fields["created_at"] = created_at.isoformat()

    appended = alice.append(thread["id"], fields, {"role": "user", "content": "plain"})
    page = alice.get(f"/api/v1/threads/{thread['id']}/messages").json()["results"]

    assert [{**m, "replayed": False} for m in page] == appended
    first = appended[0]
    assert {key: first[key] for key in fields if key != "created_at"} == {
        key: value for key, value in fields.items() if key != "created_at"
    }
    if created_at:
        assert first["created_at"] == "2024-05-01T12:30:15.250000Z"
