"""Offline consolidation keeps facts whole, keeps what matters, and stays small (issue 27, item 4).

Each test goes through the whole run (thread_consolidate_now on messages stored by the API), so
what is asserted is what a moderator would find in the queue.
"""

import json
import random

import pytest

from apps.episodic.consolidation import thread_consolidate_now
from apps.episodic.models import MemoryEntry
from apps.threads.models import Thread
from tests.threads.agent_loop_log import FAILURES, agent_loop_messages

PADDING = [{"role": "user", "content": "thanks"}] * 10  # the short-term window


def consolidated(actor, messages, **fields) -> tuple[object, list[MemoryEntry]]:
    thread = actor.new_thread(**fields)
    for start in range(0, len(messages), 100):
        actor.append(thread["id"], *messages[start : start + 100])
    report = thread_consolidate_now(thread=Thread.objects.get(pk=thread["id"]))
    entries = MemoryEntry.objects.filter(thread_id=thread["id"], kind="consolidated")
    return report, list(entries.order_by("created_at", "id"))


@pytest.mark.parametrize(
    "said",
    [
        "We moved the billing service to build 4.2 on Monday.",
        "Our users endpoint is https://api.example.com/v2.1/users since the March release.",
        "My home server moved to 10.0.0.5 yesterday.",
        "The electrician Mr. Okafor comes to our flat on Tuesday morning.",
        "Send the invoices to dana.whitfield@example.com from now on.",
    ],
)
def test_decimals_versions_urls_addresses_and_abbreviations_stay_whole_in_evidence(alice, said):
    _, entries = consolidated(alice, [{"role": "user", "content": said}, *PADDING])

    [entry] = entries
    assert entry.evidence == said
    assert entry.content == f"The user said: {said}"


@pytest.mark.parametrize(
    "content",
    [
        "Refunded 489.00 EUR to the card ending 4242.",
        '{"status": 200, "refund_id": "rf-1002", "amount": "489.00 EUR"}',
        "Invoice 404-17 paid: 489.00 EUR, order 500 shipped.",
    ],
)
def test_an_amount_or_a_number_in_a_successful_result_is_no_error(alice, content):
    messages = [
        {"role": "assistant", "kind": "tool_call", "name": "refund", "payload": {"id": "c1"}},
        {"role": "tool", "kind": "tool_result", "name": "refund", "content": content},
    ]

    _, entries = consolidated(alice, [*messages, *PADDING])

    assert entries == []


@pytest.mark.parametrize(
    "filler",
    [
        "more filler 0",
        "more filler 17",
        "ok see you",
        "lol ok 42",
        "hmm, right, so",
        "and then again",
        "yes, 12 of them",
    ],
)
def test_a_message_under_the_minimum_of_information_never_becomes_an_entry(alice, filler):
    report, entries = consolidated(alice, [{"role": "user", "content": filler}, *PADDING])

    assert entries == []
    assert report.messages == 1 and report.skipped == 1  # the rest is the short-term window


def test_a_failed_tool_call_is_remembered_with_its_tool_and_arguments(alice):
    report, entries = consolidated(alice, [*agent_loop_messages(), *PADDING])

    errors = [entry for entry in entries if entry.content.startswith("Error")]
    assert len(errors) == FAILURES
    first = errors[0].content
    assert first.startswith('Error from refund_payment(payment_id=pay-1000, amount=489.00): {"')
    assert "pay-1000" in first and "502" in first
    for entry in errors:
        assert entry.content.startswith("Error from refund_payment(payment_id=pay-")
        assert entry.evidence in entry.message.content
    # The successful steps (489.00 EUR refunded) made no entry.
    assert not [entry for entry in entries if "rf-" in entry.content]


def test_a_failed_result_whose_call_came_in_an_earlier_batch_still_names_it(alice):
    call = {
        "role": "assistant",
        "kind": "tool_call",
        "name": "fetch_workflow",
        "payload": {"id": "call_77", "arguments": {"url": "https://api.example.com/v1/wf/991"}},
    }
    result = {
        "role": "tool",
        "kind": "tool_result",
        "name": "fetch_workflow",
        "content": "Error: workflow wf-991 not found",
        "payload": {"tool_call_id": "call_77"},
    }
    # 24 messages between them: the call is judged in the first batch of 25, the result in the
    # second.
    middle = [{"role": "assistant", "content": "Working on it."}] * 24

    _, entries = consolidated(alice, [call, *middle, result, *PADDING])

    [entry] = entries
    assert entry.content == (
        "Error from fetch_workflow(url=https://api.example.com/v1/wf/991): "
        "Error: workflow wf-991 not found"
    )


def _attempt(number: int, arguments: dict, content: str) -> list[dict]:
    call_id = f"call_{number}"
    return [
        {
            "role": "assistant",
            "kind": "tool_call",
            "name": "search_flights",
            # As a chat model writes them: a JSON text (jsonb would reorder an object's keys).
            "payload": {"id": call_id, "arguments": json.dumps(arguments)},
        },
        {
            "role": "tool",
            "kind": "tool_result",
            "name": "search_flights",
            "content": content,
            "payload": {"tool_call_id": call_id},
        },
    ]


TIMEOUT = "Error: upstream timed out after 30 s"
FOUND = '{"flights": [{"id": "LH-1234", "price": "412.00 EUR"}]}'


@pytest.mark.parametrize(
    "retry, remembered",
    [
        # The same call again, and it worked: the timeout was passing, not a fact.
        ({"to": "NRT", "on": "2026-04-08"}, False),
        # Another call worked: the first one's failure still stands.
        ({"to": "HND", "on": "2026-04-08"}, True),
    ],
)
def test_a_failure_that_its_retry_got_past_is_not_remembered(alice, retry, remembered):
    first = {"to": "NRT", "on": "2026-04-08"}
    messages = [*_attempt(1, first, TIMEOUT), *_attempt(2, retry, FOUND)]

    _, entries = consolidated(alice, [*messages, *PADDING])

    assert [entry.content for entry in entries] == (
        [f"Error from search_flights(to=NRT, on=2026-04-08): {TIMEOUT}"] if remembered else []
    )


def test_a_failure_its_retries_never_got_past_is_remembered(alice):
    call = {"to": "NRT", "on": "2026-04-08"}
    messages = [*_attempt(1, call, TIMEOUT), *_attempt(2, call, TIMEOUT)]

    _, entries = consolidated(alice, [*messages, *PADDING])

    assert {entry.content for entry in entries} == {
        f"Error from search_flights(to=NRT, on=2026-04-08): {TIMEOUT}"
    }


def test_a_retry_that_came_after_the_batch_still_counts(alice):
    call = {"to": "NRT", "on": "2026-04-08"}
    # The failure ends the first batch of 25; the retry that worked opens the next.
    filler = [{"role": "assistant", "content": "Working on it."}] * 23
    messages = [*filler, *_attempt(1, call, TIMEOUT), *_attempt(2, call, FOUND)]

    _, entries = consolidated(alice, [*messages, *PADDING])

    assert entries == []


@pytest.mark.parametrize(
    "said",
    [
        "My son Luca is allergic to sesame, badly.",
        "I prefer calls after 4 pm, never in the morning.",
        "We booked the ryokan in Kanazawa for the 8th and 9th of April.",
        "Make it Ruth Adeyemi, she runs operations.",
        "The submission deadline for the thesis is 30 September.",
        "Please change the billing address on our invoices to Keizersgracht 221, Amsterdam.",
        "We agreed with the ops team: no deploys after 3 pm on Fridays from now on.",
    ],
)
def test_preferences_people_places_dates_decisions_and_commitments_are_kept(alice, said):
    _, entries = consolidated(alice, [{"role": "user", "content": said}, *PADDING])

    assert [entry.content for entry in entries] == [f"The user said: {said}"]


@pytest.mark.parametrize(
    "said",
    [
        "Give me a 15-minute stretching routine I can do at my desk.",
        'Translate "see you tomorrow, thanks for everything" into Polish.',
        "Can you give me three ideas for a short walk on a Sunday?",
        "I need a name for a spreadsheet that tracks household bills.",
        "Thanks, that's really helpful.",
        "Let me think about it and come back to you.",
        "Sorry, got distracted. Where were we?",
    ],
)
def test_requests_questions_and_small_talk_are_not_kept(alice, said):
    _, entries = consolidated(alice, [{"role": "user", "content": said}, *PADDING])

    assert entries == []


def test_what_repeats_in_a_batch_is_merged_into_one_entry(alice):
    said = "My hips feel tight after long runs on the track."
    again = "My hips feel tight after long runs on the track again."
    messages = [
        {"role": "user", "content": said},
        {"role": "assistant", "content": "Try hip flexor stretches."},
        {"role": "user", "content": again},
    ]

    report, entries = consolidated(alice, [*messages, *PADDING])

    [entry] = entries
    assert entry.content == f"The user said: {said}"
    assert entry.metadata["repeated_at"] == [3]
    assert report.repeats == 1


def test_what_is_already_an_entry_is_not_stored_again(alice):
    known = "Dana's team moved to the Prinsengracht 90 office in Amsterdam."
    alice.post("/api/v1/episodic", {"content": known})
    said = "Our team moved to the Prinsengracht 90 office in Amsterdam."

    report, entries = consolidated(alice, [{"role": "user", "content": said}, *PADDING])

    assert entries == []
    assert report.duplicates == 1


def test_a_different_number_is_a_different_fact_not_a_repeat(alice):
    messages = [
        {"role": "user", "content": "I weigh 83 kg now, after the winter."},
        {"role": "user", "content": "I weigh 78 kg now, after the winter."},
    ]

    _, entries = consolidated(alice, [*messages, *PADDING])

    assert len(entries) == 2


# An ordinary conversation, generated: requests, questions, small talk and answers, with a few
# statements worth remembering among them (one in about twenty messages).
_REQUESTS = [
    "Give me a {n}-minute stretching routine I can do at my desk.",
    "Suggest a simple breakfast that keeps me full until lunch.",
    "Write a short thank-you note for a neighbour who took in a parcel.",
    "Can you explain how compound interest works?",
    "What should I pack for a two-night trip?",
    "Recommend a board game for four adults.",
    "How do I set up email notifications only for tasks assigned to me?",
    "Is there a keyboard shortcut to create a task quickly?",
]
_SMALL_TALK = [
    "Thanks, that's really helpful.",
    "ok",
    "Let me think about it and come back to you.",
    "I'm so tired today.",
    "Sorry, got distracted. Where were we?",
    "more filler {n}",
    "Great, thank you!",
]
_ANSWERS = [
    "Press Q anywhere in the app to open quick add.",
    "Keep a book where you usually pick up your phone and read ten pages before bed.",
    "Neck rolls for a minute, shoulder shrugs, then a seated spinal twist each side.",
    "In your profile, Notifications, choose Only my tasks for email.",
    "Two tops, one pair of trousers, a light layer, a charger and toiletries.",
]
_FACTS = [
    "My son Luca is allergic to sesame, badly.",
    "We booked the ryokan in Kanazawa for the 8th and 9th of April.",
    "Our budget for the trip is 9,000 euros for the four of us.",
    "My sister Emma is getting married in Lyon on 14 June.",
    "I prefer calls after 4 pm, never in the morning.",
    "Ruth Adeyemi runs operations and owns billing from now on.",
    "Our office moved to Prinsengracht 90, Amsterdam.",
    "The thesis submission deadline is 30 September.",
]


def ordinary_conversation(count: int, seed: int = 7) -> tuple[list[dict], int]:
    """Return count messages of ordinary conversation and how many state a fact."""
    rng = random.Random(seed)
    messages, facts = [], 0
    for index in range(0, count, 2):
        roll = rng.random()
        if roll < 0.1 and facts < len(_FACTS):
            text, facts = _FACTS[facts], facts + 1
        elif roll < 0.7:
            text = rng.choice(_REQUESTS).format(n=rng.choice([10, 15, 20]))
        else:
            text = rng.choice(_SMALL_TALK).format(n=index)
        messages.append({"role": "user", "content": text})
        messages.append({"role": "assistant", "content": rng.choice(_ANSWERS)})
    return messages[:count], facts


def test_ordinary_conversation_yields_at_most_one_entry_per_ten_messages(alice):
    messages, facts = ordinary_conversation(200)

    report, entries = consolidated(alice, messages)

    assert report.messages == 190  # all but the short-term window
    assert len(entries) <= report.messages / 10
    # Not by keeping nothing: every fact said in the judged part is an entry.
    judged = [m["content"] for m in messages[: report.messages]]
    stated = [fact for fact in _FACTS[:facts] if fact in judged]
    assert stated
    assert {f"The user said: {fact}" for fact in stated} <= {e.content for e in entries}
