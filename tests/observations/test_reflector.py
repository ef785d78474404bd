"""A reflection replaces observations only when it is whole; otherwise memory stays as it was."""

import json
import re

import pytest

from apps.jobs.services import job_run_pending
from apps.observations import extractive
from apps.observations.condense import condense
from apps.observations.models import Method, Observation, ObservationFailure
from apps.observations.prompts import observer, reflector
from apps.observations.reflector import TAKEN_OVER
from apps.observations.services import observations_update
from apps.threads.selectors import thread_get
from tests.observations.conftest import configure, system_text, user_text, words


def model(reflection):
    """A fake model that echoes what it observes with each filler word shortened (one token
    still, fewer characters: an observation must be shorter than its messages), and answers
    reflections with `reflection`."""

    def answer(body):
        if system_text(body) == observer.SYSTEM:
            return json.dumps({"observations": [re.sub(r"\bnote\b", "n", user_text(body))]})
        assert system_text(body) == reflector.SYSTEM
        return reflection(body) if callable(reflection) else reflection

    return answer


def _observed_thread(actor, llm, reflection, messages=8):
    """A thread whose echoed observations pass the reflector threshold; return its id."""
    llm.script(*[model(reflection)] * 50)
    configure(
        actor, observer_message_tokens=1000, reflector_observation_tokens=500, recent_window=2
    )
    thread = actor.new_thread()["id"]
    filler = words(290)
    actor.append(
        thread,
        *[
            {
                "role": "user",
                "content": f"Deploy build-{i}0 to https://ci.example.com/r/{i}0. {filler}",
            }
            for i in range(1, messages + 1)
        ],
    )
    return thread


def _crash(body):
    raise RuntimeError("model crashed")


BAD_REFLECTIONS = [
    pytest.param(json.dumps({"reflection": ""}), "empty reflection", id="empty"),
    pytest.param(json.dumps({"reflection": "   \n"}), "empty reflection", id="blank"),
    pytest.param("I could not do it.", "did not answer JSON", id="not-json"),
    pytest.param(json.dumps({"reflection": ["a"]}), "not text", id="not-text"),
    pytest.param(json.dumps({"summary": "x"}), "left out reflection", id="missing-key"),
    pytest.param(_crash, "answered 500", id="server-error"),
]


@pytest.mark.parametrize("answer, says", BAD_REFLECTIONS)
def test_a_failed_empty_or_malformed_reflection_is_replaced_by_the_rules_reflection(
    alice, llm, answer, says
):
    thread = _observed_thread(alice, llm, answer)

    job_run_pending()

    reflection = Observation.objects.get(thread_id=thread, is_reflection=True)
    sources = Observation.objects.filter(thread_id=thread, superseded_by=reflection)
    assert sources.count() >= 2 and reflection.generation == 2
    assert reflection.method == Method.EXTRACTIVE and reflection.model == ""
    assert reflection.content == condense([row.content for row in sources.order_by("first_seq")])
    failure = ObservationFailure.objects.get(thread_id=thread, stage="reflector")
    assert says in failure.error
    assert failure.outcome == TAKEN_OVER
    assert (failure.first_seq, failure.last_seq) == (1, 6)


def test_a_failed_reflection_is_not_asked_again_until_new_observations_arrive(alice, llm):
    thread = _observed_thread(alice, llm, "not json")
    job_run_pending()
    asked = len(llm.requests)

    observations_update(thread=thread_get(agent=alice.agent, thread_id=thread))
    assert len(llm.requests) == asked

    alice.append(thread, {"role": "user", "content": "Deploy build-99 now. " + words(900)})
    alice.append(thread, {"role": "user", "content": "And report."})
    alice.append(thread, {"role": "user", "content": "Thanks."})
    job_run_pending()
    assert len(llm.requests) > asked + 1  # an observation, then a new reflection attempt
    assert ObservationFailure.objects.filter(thread_id=thread, stage="reflector").count() == 2


def test_a_whole_reflection_supersedes_the_observations_it_condenses(alice, llm):
    thread = _observed_thread(
        alice, llm, lambda body: json.dumps({"reflection": "Deployed: " + _ids(body)})
    )

    job_run_pending()

    reflection = Observation.objects.get(thread_id=thread, is_reflection=True)
    sources = Observation.objects.filter(thread_id=thread, superseded_by=reflection)
    assert (reflection.generation, reflection.first_seq, reflection.last_seq) == (2, 1, 6)
    assert reflection.method == Method.LLM
    assert reflection.prompt_version == reflector.VERSION
    assert sources.count() >= 2 and {row.generation for row in sources} == {1}
    assert reflection.message_tokens == sum(row.message_tokens for row in sources)


def test_a_reflection_that_drops_an_identifier_is_replaced_by_the_rules_reflection(alice, llm):
    thread = _observed_thread(
        alice, llm, lambda body: json.dumps({"reflection": _ids(body).replace("build-30", "")})
    )

    job_run_pending()

    reflection = Observation.objects.get(thread_id=thread, is_reflection=True)
    sources = Observation.objects.filter(thread_id=thread, superseded_by=reflection)
    assert reflection.method == Method.EXTRACTIVE
    assert reflection.content == condense([row.content for row in sources.order_by("first_seq")])
    assert "build-30" in reflection.content
    failure = ObservationFailure.objects.get(thread_id=thread, stage="reflector")
    assert failure.error == "the reflection dropped build-30"
    assert failure.outcome == TAKEN_OVER


ERROR_LINE = "Deploy of build-40 failed: the registry refused the connection."
DECISION_LINE = "We decided to pin the registry mirror from now on."


def _thread_with_an_error_and_a_decision(actor, llm, reflection) -> str:
    thread = _observed_thread(actor, llm, reflection, messages=6)
    filler = words(290)
    actor.append(
        thread,
        {"role": "user", "content": f"{ERROR_LINE} {filler}"},
        {"role": "user", "content": f"{DECISION_LINE} {filler}"},
        {"role": "user", "content": "And the next one."},
        {"role": "user", "content": "Last."},
    )
    return thread


def test_a_reflection_that_drops_an_error_line_or_a_decision_is_replaced(alice, llm):
    thread = _thread_with_an_error_and_a_decision(
        alice, llm, lambda body: json.dumps({"reflection": "Deployed: " + _ids(body)})
    )

    job_run_pending()

    reflection = Observation.objects.get(thread_id=thread, is_reflection=True)
    assert reflection.method == Method.EXTRACTIVE
    assert ERROR_LINE in reflection.content and DECISION_LINE in reflection.content
    failure = ObservationFailure.objects.get(thread_id=thread, stage="reflector")
    assert "registry refused the connection" in failure.error
    assert "decided to pin the registry mirror" in failure.error


def test_a_reflection_may_reword_an_error_line_and_a_decision(alice, llm):
    reworded = "The registry refused the connection, so deploying failed. Decided: pin the mirror."
    thread = _thread_with_an_error_and_a_decision(
        alice, llm, lambda body: json.dumps({"reflection": f"{reworded} {_ids(body)}"})
    )

    job_run_pending()

    reflection = Observation.objects.get(thread_id=thread, is_reflection=True)
    assert reflection.method == Method.LLM
    assert reflection.content.startswith(reworded)
    assert not ObservationFailure.objects.filter(thread_id=thread).exists()


def test_two_jobs_reflecting_the_same_observations_publish_one_reflection(alice, llm):
    from apps.observations import reflector as reflector_service

    thread = _observed_thread(alice, llm, json.dumps({"reflection": "x"}))
    configure(alice, reflector_observation_tokens=10_000_000)  # observe only
    job_run_pending()
    model_thread = thread_get(agent=alice.agent, thread_id=thread)
    active = list(Observation.objects.filter(thread_id=thread).order_by("first_seq"))

    first = reflector_service._publish(model_thread, active, 1, "one", Method.EXTRACTIVE, None)
    with pytest.raises(reflector_service._Superseded):
        reflector_service._publish(model_thread, active, 1, "two", Method.EXTRACTIVE, None)

    assert list(Observation.objects.filter(thread_id=thread, is_reflection=True)) == [first]


def _ids(body) -> str:
    return " ".join(sorted(extractive.identifiers_in(user_text(body))))
