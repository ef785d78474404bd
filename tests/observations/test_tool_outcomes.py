"""Observations tell a failed step from a good one as the console does, and keep ids whole."""

import json
import re

from apps.jobs.services import job_run_pending
from apps.observations import extractive
from apps.observations.models import Method, Observation, ObservationFailure
from apps.observations.prompts import observer, reflector
from apps.observations.selectors import observations_active
from apps.threads.models import Message
from apps.threads.selectors import thread_get
from tests.observations.conftest import configure, system_text, user_text, words
from tests.threads.agent_loop_log import FAILURES, agent_loop_thread, failing_results

URL = "https://api.example.com/v1/workflows/wf-5f0c2a/runs/77810042/build.log"
UUID = "7c9e6679-7425-40de-944b-e07fc1f90ae7"
CUT_URL = URL[:38] + "…"  # how a digest, or a model, shortened it


def _digest(actor, messages) -> str:
    thread = actor.new_thread()["id"]
    actor.append(thread, *messages)
    return extractive.messages_digest(Message.objects.filter(thread_id=thread).order_by("seq"))


def test_every_failing_result_of_an_agent_loop_is_observed_as_an_error(alice):
    configure(alice, observer_message_tokens=500, recent_window=0)
    thread = agent_loop_thread(alice)

    job_run_pending()

    active = observations_active(thread=thread_get(agent=alice.agent, thread_id=thread["id"]))
    text = "\n".join(row.content for row in active)
    assert [row.method for row in active] == [Method.EXTRACTIVE] * len(active)
    # Each call is observed with its result, even where one observation ends and the next begins.
    assert len(active) > 1 and "(pending)" not in text and " result → " not in text
    # Failed calls stay one line each; the successful ones of an observation are grouped
    # ("refund_payment ×5 → ok …", condense.py) or stand alone when there is only one.
    steps = [line for line in text.splitlines() if "refund_payment" in line]
    assert sum("→ error: " in line for line in steps) == FAILURES
    ok = [re.search(r"refund_payment(?: ×(\d+))?\(?.*?→ ok", line) for line in steps]
    assert sum(int(found[1] or 1) for found in ok if found) == 36 - FAILURES
    for result in failing_results():
        assert result in text  # verbatim, beside its call


def test_an_error_result_pairs_with_its_call_by_tool_call_id(alice):
    digest = _digest(
        alice,
        [
            {"role": "assistant", "kind": "tool_call", "name": "refund", "payload": {"id": "r1"}},
            {"role": "assistant", "kind": "tool_call", "name": "notify", "payload": {"id": "n1"}},
            {
                "role": "tool",
                "kind": "error",
                "name": "refund",
                "content": "card declined",
                "payload": {"tool_call_id": "r1"},
            },
            {
                "role": "tool",
                "kind": "tool_result",
                "name": "notify",
                "content": "sent",
                "metadata": {"tool_call_id": "n1"},
            },
        ],
    )

    assert extractive.undated(digest).splitlines() == [
        "[#1–3] refund(id=r1) → error: card declined",
        "[#2–4] notify(id=n1) → ok",
    ]


def test_a_long_url_and_a_uuid_argument_are_kept_whole(alice):
    assert len(URL) == 70
    digest = _digest(
        alice,
        [
            {
                "role": "assistant",
                "kind": "tool_call",
                "name": "fetch_artifact",
                "payload": {
                    "arguments": {
                        "url": URL,
                        "note": f"retry the export of workflow run {UUID} before the 09:00 cutoff",
                        "workflow_id": UUID,
                    }
                },
            },
            {"role": "tool", "kind": "tool_result", "name": "fetch_artifact", "content": "{}"},
        ],
    )

    assert f"url={URL}" in digest
    assert f"workflow_id={UUID}" in digest
    assert f"note=retry the export of workflow run {UUID} …" in digest
    assert "09:00" in digest  # the cut prose leaves its facts behind it


def _cutting_model(body) -> str:
    """A model that shortens the URL when it observes and keeps what it is given when it
    reflects."""
    text = user_text(body)
    if system_text(body) == observer.SYSTEM:
        return json.dumps({"observations": [text.replace(URL, CUT_URL)]})
    assert system_text(body) == reflector.SYSTEM
    return json.dumps({"reflection": " ".join(sorted(extractive.identifiers_in(text)))})


def test_an_observation_that_cuts_an_identifier_short_is_refused_and_kept_whole(alice, llm):
    llm.script(*[_cutting_model] * 50)
    configure(
        alice, observer_message_tokens=1000, reflector_observation_tokens=500, recent_window=2
    )
    thread = alice.new_thread()["id"]
    alice.append(
        thread,
        *[
            {"role": "user", "content": f"Build {i}0 logs to {URL} now. {words(290)}"}
            for i in range(1, 9)
        ],
    )

    job_run_pending()

    # The observer refuses an answer that drops an identifier of its messages (the cut URL):
    # the extractive observations, which keep it whole, are stored instead.
    observations = Observation.objects.filter(thread_id=thread, is_reflection=False)
    assert all(URL in row.content for row in observations)
    assert {row.method for row in observations} == {Method.EXTRACTIVE}
    failures = ObservationFailure.objects.filter(thread_id=thread, stage="observer")
    assert failures and all(URL in failure.error for failure in failures)
