"""Real model failures on the observer, the compaction summary and the reflector (issue 27, item 6).

Each failure is scripted on the loopback OpenAI server and goes through the real client: JSON in
fences or with prose around it (used), answers cut at the token limit, empty answers, refusals,
answers longer than their source, answers that drop an identifier or an error, 429 (waited when
Retry-After allows, else failed), timeouts, 5xx. A failure is recorded with its reason, the
extractive path takes over, and what is stored is whole: the ranges published cover the
messages without gap, and nothing is stored for a range that was not published.
"""

import json
import re

import pytest

from apps.jobs.services import job_run_pending
from apps.observations.models import (
    Method,
    Observation,
    ObservationFailure,
    ObservationProgress,
    ThreadSummary,
)
from apps.observations.prompts import compaction, observer, reflector
from apps.observations.reflector import TAKEN_OVER
from apps.providers.answers import identifiers_in
from tests.observations.conftest import configure, system_text, user_text, words

ERROR = "Error: registry-7 refused the connection"


def faithful(body: dict) -> str:
    """A careful answer: short, every identifier of the prompt kept, the error named."""
    kept = " ".join(sorted(identifiers_in(user_text(body))))
    return f"Kept {kept}; the registry refused the connection (error)."  # kept holds registry-7


def as_json(stage: str, text: str) -> str:
    key = {"observer": "observations", "compaction": "summary", "reflector": "reflection"}[stage]
    return json.dumps({key: [text] if stage == "observer" else text})


def answering(stage: str, make):
    """A model that answers the stage's prompt with make(body) and the others faithfully."""
    systems = {"observer": observer.SYSTEM, "compaction": compaction.SYSTEM}
    systems["reflector"] = reflector.SYSTEM

    def answer(body):
        if system_text(body) == systems[stage]:
            return make(body)
        other = next(name for name, system in systems.items() if system == system_text(body))
        return as_json(other, faithful(body))

    return answer


# (id, scripted answer of the stage for a prompt body, what the recorded failure says)
FAILING_ANSWERS = [
    (
        "truncated",
        lambda stage: (
            lambda body: {"content": as_json(stage, "Kept")[:12], "finish_reason": "length"}
        ),
        "cut at its token limit",
    ),
    ("empty", lambda stage: lambda body: {"content": ""}, "answered no text"),
    (
        "refusal",
        lambda stage: lambda body: {"content": None, "refusal": "I can't help with that."},
        "refused",
    ),
    (
        "refusal-text",
        lambda stage: lambda body: "I'm sorry, but I can't help with summarising this.",
        "refused",
    ),
    (
        "longer",
        lambda stage: lambda body: as_json(stage, faithful(body) + " " + user_text(body)),
        "longer than its source",
    ),
    (
        "drops-identifier",
        lambda stage: lambda body: as_json(stage, "Fixed the bugs; the registry failed (error)."),
        "it dropped",
    ),
    (
        "drops-error",
        lambda stage: (
            lambda body: as_json(stage, " ".join(sorted(identifiers_in(user_text(body)))))
        ),
        "it dropped the error",
    ),
]


def _observer_thread(actor) -> str:
    configure(actor, observer_message_tokens=300, recent_window=1, observer_model="obs-model")
    thread = actor.new_thread()["id"]
    actor.append(
        thread,
        *[
            {"role": "user", "content": f"Fix bug-{i}1 in the parser. {words(20)}"}
            for i in range(9)
        ],
        {"role": "tool", "kind": "error", "name": "deploy", "content": ERROR},
        {"role": "user", "content": "Thanks, that is all for today."},
    )
    return thread


def _compaction_thread(actor) -> str:
    configure(
        actor,
        context_strategy="compaction",
        compaction_budget_tokens=1000,
        recent_window=1,
        observer_model="obs-model",
    )
    thread = actor.new_thread()["id"]
    actor.append(
        thread,
        *[
            {"role": "user", "content": f"Fix bug-{i}1 in the parser. {words(96)}"}
            for i in range(9)
        ],
        {"role": "tool", "kind": "error", "name": "deploy", "content": ERROR},
        {"role": "user", "content": "Thanks, that is all for today."},
    )
    return thread


def _stored(stage, thread):
    if stage == "observer":
        return list(Observation.objects.filter(thread_id=thread).order_by("first_seq"))
    return list(ThreadSummary.objects.filter(thread_id=thread).order_by("version"))


def _assert_whole(stage, thread, rows) -> None:
    """The rows cover #1… without gap and the progress says exactly what they cover."""
    if stage == "observer":
        spans = [(row.first_seq, row.last_seq) for row in rows]
        assert spans[0][0] == 1
        assert all(a[1] + 1 == b[0] for a, b in zip(spans, spans[1:], strict=False))
        assert ObservationProgress.objects.get(thread_id=thread).observed_up_to == spans[-1][1]
    else:
        assert [row.version for row in rows] == list(range(1, len(rows) + 1))


THREADS = {"observer": _observer_thread, "compaction": _compaction_thread}


@pytest.mark.parametrize("stage", ["observer", "compaction"])
@pytest.mark.parametrize(
    ("make", "says"),
    [pytest.param(make, says, id=name) for name, make, says in FAILING_ANSWERS],
)
def test_a_failing_answer_is_recorded_and_the_extractive_path_takes_over(
    alice, llm, stage, make, says
):
    llm.script(*[answering(stage, make(stage))] * 20)
    thread = THREADS[stage](alice)

    job_run_pending()

    rows = _stored(stage, thread)
    _assert_whole(stage, thread, rows)
    failures = ObservationFailure.objects.filter(thread_id=thread, stage=stage)
    assert failures.exists()
    assert all(says in failure.error for failure in failures), failures[0].error
    assert all("instead" in failure.outcome for failure in failures)
    # Each refused answer was replaced by the extractive result of its range; an answer of the
    # same kind that lost nothing of its own range (a range without an error, say) was kept.
    extractive = [row for row in rows if row.method == Method.EXTRACTIVE]
    assert len(extractive) == failures.count()
    stored = "\n".join(row.content for row in rows)
    assert all(f"bug-{i}1" in stored for i in range(9))
    assert ERROR in stored or "registry-7" in stored


@pytest.mark.parametrize("stage", ["observer", "compaction"])
@pytest.mark.parametrize(
    "wrap",
    [
        pytest.param(lambda text: f"```json\n{text}\n```", id="fenced"),
        pytest.param(
            lambda text: f"Here is the JSON:\n```json\n{text}\n```\nDone.", id="prose-fence"
        ),
        pytest.param(lambda text: f"Sure! {text} Hope this helps.", id="prose-around"),
    ],
)
def test_json_in_fences_or_with_prose_around_it_is_used(alice, llm, stage, wrap):
    llm.script(*[answering(stage, lambda body: wrap(as_json(stage, faithful(body))))] * 20)
    thread = THREADS[stage](alice)

    job_run_pending()

    rows = _stored(stage, thread)
    assert rows and {row.method for row in rows} == {Method.LLM}
    assert rows[0].content.startswith("Kept ") and "bug-01" in rows[0].content
    assert not ObservationFailure.objects.filter(thread_id=thread).exists()


@pytest.mark.parametrize("stage", ["observer", "compaction"])
@pytest.mark.parametrize(
    ("fault", "says"),
    [
        pytest.param(
            lambda llm: llm.fail_next(50, status=429, message="Slow down"), "429", id="429"
        ),
        pytest.param(
            lambda llm: llm.fail_next(50, status=503, message="overloaded"), "503", id="503"
        ),
        pytest.param(lambda llm: llm.fail_next(50, status=500), "answered 500", id="500"),
        pytest.param(lambda llm: llm.delay(1.0), "timed out", id="timeout"),
    ],
)
def test_a_failing_call_is_recorded_and_the_extractive_path_takes_over(
    alice, llm, settings, stage, fault, says
):
    settings.OPENAI_TIMEOUT = 0.2
    thread = THREADS[stage](alice)
    fault(llm)

    job_run_pending()
    llm.delay(0)

    rows = _stored(stage, thread)
    assert rows and {row.method for row in rows} == {Method.EXTRACTIVE}
    _assert_whole(stage, thread, rows)
    failures = ObservationFailure.objects.filter(thread_id=thread, stage=stage)
    assert failures.count() == len(rows) and all(says in f.error for f in failures)


@pytest.mark.parametrize("stage", ["observer", "compaction"])
def test_a_429_whose_retry_after_is_waited_out_is_answered_by_the_model(
    alice, llm, settings, stage
):
    settings.OPENAI_MAX_RETRIES = 2
    llm.script(*[answering(stage, lambda body: as_json(stage, faithful(body)))] * 20)
    thread = THREADS[stage](alice)
    llm.fail_next(2, status=429, message="Slow down", retry_after=0.05)

    job_run_pending()

    assert {row.method for row in _stored(stage, thread)} == {Method.LLM}
    assert not ObservationFailure.objects.filter(thread_id=thread).exists()


# The reflector: a failed call keeps the generation as it was (nothing half-written); an answer
# that is not shorter than its sources, or drops a fact, falls back to the sources merged.


def _reflected_thread(actor, llm, make) -> str:
    def answer(body):
        if system_text(body) == observer.SYSTEM:
            # Observations as long as the reflector needs, shorter than the messages.
            return as_json("observer", re.sub(r"\bnote\b", "n", user_text(body)))
        return make(body)

    llm.script(*[answer] * 50)
    configure(
        actor, observer_message_tokens=1000, reflector_observation_tokens=500, recent_window=2
    )
    thread = actor.new_thread()["id"]
    actor.append(
        thread,
        *[
            {"role": "user", "content": f"Deploy build-{i}0 to stage-{i}. {words(290)}"}
            for i in range(1, 9)
        ],
    )
    job_run_pending()
    return thread


@pytest.mark.parametrize(
    ("make", "says"),
    [
        pytest.param(make("reflector"), says, id=name)
        for name, make, says in FAILING_ANSWERS
        if name in ("truncated", "empty", "refusal", "refusal-text")
    ],
)
def test_a_failed_reflection_is_replaced_by_the_rules_reflection(alice, llm, make, says):
    thread = _reflected_thread(alice, llm, make)

    reflection = Observation.objects.get(thread_id=thread, is_reflection=True)
    assert reflection.method == Method.EXTRACTIVE
    assert Observation.objects.filter(thread_id=thread, superseded_by=reflection).count() >= 2
    assert ObservationProgress.objects.get(thread_id=thread).generation == 2
    failure = ObservationFailure.objects.get(thread_id=thread, stage="reflector")
    assert says in failure.error and failure.outcome == TAKEN_OVER


def test_a_reflection_longer_than_its_sources_is_replaced_by_the_rules_reflection(alice, llm):
    def longer(body):
        return as_json("reflector", faithful(body) + " " + user_text(body))

    thread = _reflected_thread(alice, llm, longer)

    reflection = Observation.objects.get(thread_id=thread, is_reflection=True)
    assert reflection.method == Method.EXTRACTIVE
    assert "build-10" in reflection.content and "build-60" in reflection.content
    failure = ObservationFailure.objects.get(thread_id=thread, stage="reflector")
    assert "not shorter than its sources" in failure.error
