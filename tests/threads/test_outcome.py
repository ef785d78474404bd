"""One definition of a tool step's outcome: an error by its kind, or by what its result says."""

import json

import pytest

from apps.threads.models import Message
from apps.threads.outcome import message_outcome
from tests.threads.agent_loop_log import FAILURES, agent_loop_thread


def _result(content="", payload=None, kind="tool_result", role="tool") -> Message:
    return Message(role=role, kind=kind, name="t", content=content, payload=payload)


ERRORS = [
    pytest.param(_result(kind="error", role="assistant", content="gave up"), "kind", id="kind"),
    pytest.param(
        _result('{"status": 502, "detail": "x"}', {"tool_call_id": "c1"}), "502", id="502"
    ),
    pytest.param(_result('{"status_code": "503"}'), "503", id="numeric-string"),
    pytest.param(_result('{"ok": false, "reason": "expired"}'), "ok: false", id="ok-false"),
    pytest.param(_result('{"success": false}'), "success: false", id="success-false"),
    pytest.param(_result('{"error": "timeout"}'), "timeout", id="error"),
    pytest.param(_result('{"isError": true}'), "isError", id="mcp-is-error"),
    pytest.param(_result('{"status": "failed"}'), "failed", id="status-failed"),
    pytest.param(_result("Error: refund window closed"), "Error:", id="error-text"),
    pytest.param(_result("ERROR - disk full\nmore"), "ERROR", id="error-label"),
    pytest.param(
        _result("Traceback (most recent call last):\n  File x\nKeyError: 'id'"),
        "Traceback",
        id="traceback",
    ),
    pytest.param(_result("requests.exceptions.ConnectionError: refused"), "Connection", id="exc"),
    pytest.param(_result("HTTP/1.1 504 Gateway Timeout"), "504", id="http-status-line"),
    pytest.param(_result(json.dumps("Error: quoted")), "Error:", id="json-string"),
    pytest.param(_result("", {"status": 503, "error": "upstream down"}), "upstream", id="payload"),
    pytest.param(_result("Error: x", kind="message"), "Error:", id="tool-role-message"),
]


@pytest.mark.parametrize("message, says", ERRORS)
def test_it_says_a_message_is_an_error_and_why(message, says):
    outcome = message_outcome(message)

    assert outcome.error and outcome and says in outcome.reason


OK = [
    pytest.param(_result('{"status": 200, "amount": "489.00 EUR"}'), id="200"),
    pytest.param(_result("Refunded 489.00 EUR to card 4242."), id="amount"),
    pytest.param(_result('{"errors": [], "ok": true}'), id="mentions-errors"),
    pytest.param(_result('{"error": null, "status": "done"}'), id="null-error"),
    pytest.param(_result("Found 3 errors in the log, all fixed."), id="prose"),
    pytest.param(_result("ok\nError: only on the second line"), id="second-line"),
    pytest.param(_result("Error-free run of 12 jobs"), id="error-free"),
    pytest.param(_result("Error rate: 0.1% over 489 calls"), id="error-rate"),
    pytest.param(_result('{"ok": true}', {"status": 500}), id="content-decides"),
    pytest.param(_result('{"status": true}'), id="bool-status"),
    pytest.param(_result("Error: a user typed this", kind="message", role="user"), id="user"),
    pytest.param(_result("", {"tool_call_id": "c1"}), id="empty"),
]


@pytest.mark.parametrize("message", OK)
def test_it_says_a_successful_result_or_a_plain_message_is_not_an_error(message):
    outcome = message_outcome(message)

    assert not outcome and outcome.reason == ""


def test_it_marks_each_failing_result_of_an_agent_loop_as_an_error_when_stored(alice):
    thread = agent_loop_thread(alice)

    stored = Message.objects.filter(thread_id=thread["id"])

    assert stored.filter(is_error=True).count() == FAILURES
    assert all(message_outcome(message).error == message.is_error for message in stored)
