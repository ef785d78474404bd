"""Without a model, rules observe: a tool step shrinks to a line, errors and requests stay whole."""

from apps.observations import extractive
from apps.providers.tokens import count_tokens
from apps.threads.models import Message
from tests.observations.toolloop import error_lines, user_requests


def _stored(actor, messages) -> list[Message]:
    thread = actor.new_thread()["id"]
    for start in range(0, len(messages), 50):
        actor.append(thread, *messages[start : start + 50])
    return list(Message.objects.filter(thread_id=thread).order_by("seq"))


def test_the_tool_loop_compresses_at_least_five_times(alice, loop):
    messages = _stored(alice, loop)

    digest = extractive.messages_digest(messages)

    source = sum(message.token_count for message in messages)
    assert source / count_tokens(digest) >= 5


def test_every_error_line_and_user_request_of_the_tool_loop_is_kept_verbatim(alice, loop):
    digest = extractive.messages_digest(_stored(alice, loop))

    assert len(error_lines(loop)) >= 2 and len(user_requests(loop)) >= 5
    for line in error_lines(loop) | user_requests(loop):
        assert line in digest


def test_a_retried_step_is_collapsed_into_one_line_with_a_count(alice):
    call = {"role": "assistant", "kind": "tool_call", "name": "http_get", "payload": {"url": "u"}}
    failure = {"role": "tool", "kind": "error", "name": "http_get", "content": "HTTP 503 down"}
    messages = _stored(alice, [call, failure] * 3)

    digest = extractive.messages_digest(messages)

    assert extractive.undated(digest) == "[#1–6] http_get(url=u) → error: HTTP 503 down ×3"


def test_a_tool_call_becomes_its_name_an_argument_digest_and_its_outcome(alice):
    long_query = "select * from orders where " + "x = 1 and " * 40
    messages = _stored(
        alice,
        [
            {
                "role": "assistant",
                "kind": "tool_call",
                "name": "run_query",
                # jsonb orders keys shortest first: the same order on both backends.
                "payload": {"arguments": {"db": "orders-eu", "sql": long_query}},
            },
            {
                "role": "tool",
                "kind": "tool_result",
                "name": "run_query",
                "content": '{"status": 200, "rows": [{"id": "ord-77a1"}], "report": "out/q3.csv"}',
            },
        ],
    )

    digest = extractive.messages_digest(messages)

    assert extractive.undated(digest) == (
        "[#1–2] run_query(db=orders-eu, sql=select * from orders where x = 1 and x …)"
        " → ok; ord-77a1, out/q3.csv, 200"
    )


def test_a_results_dates_and_times_are_not_split_into_numbers(alice):
    result = {"tracking": "JD014600006281234567", "eta": "2026-03-05", "slot": "14:30"}
    messages = _stored(
        alice,
        [
            {"role": "assistant", "kind": "tool_call", "name": "lookup_order"},
            {"role": "tool", "kind": "tool_result", "name": "lookup_order", "payload": result},
        ],
    )

    line = extractive.undated(extractive.messages_digest(messages))

    # A result's dates are its bulk (timestamps, mostly): passed over whole, not quoted as the
    # numbers 2026, 03, 05, 14 and 30.
    assert line == "[#1–2] lookup_order() → ok; JD014600006281234567"


def test_a_successful_result_that_mentions_errors_is_not_an_error(alice):
    messages = _stored(
        alice,
        [
            {"role": "assistant", "kind": "tool_call", "name": "lint"},
            {"role": "tool", "kind": "tool_result", "name": "lint", "content": '{"errors": []}'},
        ],
    )

    assert extractive.undated(extractive.messages_digest(messages)) == "[#1–2] lint() → ok"


def test_a_reflection_falls_back_to_its_sources_with_repeats_merged():
    sources = ["[#1–2] fetch(x) → ok\n[#3] User: go on", "[#9–10] fetch(x) → ok\n[#11] Error: 429"]

    merged = extractive.observations_merge(sources)

    assert merged == "[#1–2, #9–10] fetch(x) → ok\n[#3] User: go on\n[#11] Error: 429"


def test_identifiers_are_ids_urls_file_names_and_numbers_not_seq_references():
    text = (
        "[#12–13] Built wf-123 from deploy.yaml, see https://ci.example.com/r/9 (HTTP 429) ×3"
        " due 2026-03-05"
    )

    assert extractive.identifiers_in(text) == {
        "wf-123",
        "deploy.yaml",
        "https://ci.example.com/r/9",
        "429",
    }
