"""Offline consolidation labels a tool result an error only when threads.outcome says it is one."""

import pytest

from apps.episodic.consolidation.fallback import message_keep
from apps.threads.models import Message
from tests.threads.agent_loop_log import FAILURES, agent_loop_messages


def _stored(actor, *messages) -> list[Message]:
    thread = actor.new_thread()["id"]
    actor.append(thread, *messages)
    return list(Message.objects.filter(thread_id=thread).order_by("seq"))


@pytest.mark.parametrize(
    "content",
    [
        "Refunded 489.00 EUR to the card ending 4242.",
        '{"status": 200, "refund_id": "rf-1002", "amount": "489.00 EUR"}',
        "Order 500 shipped; invoice 404-17 attached.",
    ],
)
def test_a_successful_result_with_numbers_is_not_labelled_an_error(alice, content):
    (result,) = _stored(
        alice, {"role": "tool", "kind": "tool_result", "name": "refund", "content": content}
    )

    assert message_keep(result) is None


def test_each_failing_result_of_an_agent_loop_is_labelled_an_error(alice):
    stored = _stored(alice, *agent_loop_messages())
    results = [message for message in stored if message.kind == "tool_result"]

    labelled = [message_keep(message) for message in results]

    errors = [kept for kept in labelled if kept is not None]
    assert len(errors) == FAILURES
    assert all(kept.content.startswith("Error from tool refund_payment: ") for kept in errors)
    pairs = zip(labelled, results, strict=True)
    assert all(kept.evidence in message.content for kept, message in pairs if kept)
