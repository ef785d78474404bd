"""Real model failures on consolidation and extraction (issue 27, item 6), on the loopback server.

A failure is recorded where operators see the observer's (the thread's memory failures) with
its reason; consolidation's extractive rules take over the batch, and nothing of the failed
answer is stored: a batch publishes its progress and its entries together, or not at all.
"""

import json

import pytest

from apps.episodic.consolidation import thread_consolidate_now
from apps.episodic.models import ConsolidationProgress, ExtractionRun, MemoryEntry
from apps.episodic.prompts import (
    consolidation_create,
    consolidation_is_useful,
    consolidation_rewrite,
)
from apps.jobs.services import job_run_pending
from apps.observations.models import ObservationFailure
from apps.threads.models import Thread
from tests.episodic.conftest import configure, entries_answer

SAID = "Host web-7 runs Ubuntu 24.04 at 10.0.0.5 since Monday."
MESSAGES = [{"role": "user", "content": SAID}] + [{"role": "user", "content": "thanks"}] * 10


def _thread(actor) -> Thread:
    configure(actor, episodic_extraction_enabled=False)
    thread = actor.new_thread()
    actor.append(thread["id"], *MESSAGES)
    return Thread.objects.get(pk=thread["id"])


def _careful(body: dict) -> str:
    """Answer the three consolidation prompts keeping the message whole."""
    system = body["messages"][0]["content"]
    if system == consolidation_is_useful.SYSTEM:
        return json.dumps({"useful": [1]})
    if system == consolidation_rewrite.SYSTEM:
        return json.dumps({"memories": [{"seqs": [1], "content": f"Noted: {SAID}"}]})
    assert system == consolidation_create.SYSTEM
    return json.dumps({"create": [0]})


def _at(step: str, answer):
    """_careful, except that the step's prompt gets answer (a scripted choice or text)."""
    systems = {
        "is_useful": consolidation_is_useful.SYSTEM,
        "rewrite": consolidation_rewrite.SYSTEM,
        "create": consolidation_create.SYSTEM,
    }

    def respond(body):
        if body["messages"][0]["content"] == systems[step]:
            return answer(body) if callable(answer) else answer
        return _careful(body)

    return respond


FAILING = [
    pytest.param(
        "is_useful", {"content": '{"useful": [', "finish_reason": "length"}, "token limit"
    ),
    pytest.param("is_useful", {"content": ""}, "answered no text", id="empty"),
    pytest.param(
        "rewrite", {"content": None, "refusal": "I can't help with that."}, "refused", id="refusal"
    ),
    pytest.param("rewrite", "I'm sorry, but I cannot do that.", "refused", id="refusal-text"),
    pytest.param(
        "rewrite",
        json.dumps({"memories": [{"seqs": [1], "content": "A host runs Ubuntu."}]}),
        "it dropped 10.0.0.5, 24.04, web-7",
        id="drops-identifiers",
    ),
    pytest.param(
        "create", 'Sure, here it is: ```json\n{"create": [0\n```', "did not answer JSON", id="cut"
    ),
]


@pytest.mark.parametrize(("step", "answer", "says"), FAILING)
def test_a_failing_answer_leaves_the_batch_to_the_rules_and_is_recorded(
    alice, llm, step, answer, says
):
    thread = _thread(alice)
    llm.script(*[_at(step, answer)] * 3)

    report = thread_consolidate_now(thread=thread)

    [entry] = MemoryEntry.objects.filter(thread=thread)
    assert entry.content == f"The user said: {SAID}"
    assert entry.metadata["method"] == "extractive" and report.methods == {"extractive"}
    failure = ObservationFailure.objects.get(thread=thread)
    assert failure.stage == "consolidation" and says in failure.error
    assert (failure.first_seq, failure.last_seq) == (1, 1)
    assert failure.outcome == "extractive consolidation stored instead"
    assert ConsolidationProgress.objects.get(thread=thread).consolidated_up_to == 1


@pytest.mark.parametrize(
    ("fault", "says"),
    [
        pytest.param(lambda llm: llm.fail_next(5, 429, "Slow down"), "answered 429", id="429"),
        pytest.param(lambda llm: llm.fail_next(5, 502, "Bad gateway"), "answered 502", id="502"),
        pytest.param(lambda llm: llm.delay(1.0), "timed out", id="timeout"),
    ],
)
def test_a_failing_call_leaves_the_batch_to_the_rules_and_is_recorded(
    alice, llm, settings, fault, says
):
    settings.OPENAI_TIMEOUT = 0.2
    thread = _thread(alice)
    fault(llm)

    thread_consolidate_now(thread=thread)
    llm.delay(0)

    [entry] = MemoryEntry.objects.filter(thread=thread)
    assert entry.metadata["method"] == "extractive"
    assert says in ObservationFailure.objects.get(thread=thread, stage="consolidation").error


def test_a_429_waited_out_by_its_retry_after_is_answered_by_the_model(alice, llm, settings):
    settings.OPENAI_MAX_RETRIES = 2
    thread = _thread(alice)
    llm.fail_next(2, 429, "Slow down", retry_after=0.05)
    llm.script(*[_careful] * 3)

    thread_consolidate_now(thread=thread)

    [entry] = MemoryEntry.objects.filter(thread=thread)
    assert entry.content == f"Noted: {SAID}" and entry.metadata["method"] == "llm"
    assert not ObservationFailure.objects.filter(thread=thread).exists()


def test_a_model_failing_after_its_first_answers_stores_nothing_of_them(alice, llm):
    # is_useful and rewrite answer; create fails: none of the model's memories is stored.
    thread = _thread(alice)
    llm.script(_careful, _careful)

    def failing_create(body):
        raise RuntimeError("model crashed")

    llm.script(failing_create)

    thread_consolidate_now(thread=thread)

    contents = list(MemoryEntry.objects.filter(thread=thread).values_list("content", flat=True))
    assert contents == [f"The user said: {SAID}"]
    assert "answered 500" in ObservationFailure.objects.get(thread=thread).error


# Extraction: what the model answers for a turn.

USER = "The workspace ws-4411 stays locked after I renewed on Monday."
ASSISTANT = "Record A holds the subscription of ws-4411; entitlement reads record B."


def _turn(actor) -> str:
    thread = actor.new_thread(resource_id="cust-1")["id"]
    actor.append(
        thread, {"role": "user", "content": USER}, {"role": "assistant", "content": ASSISTANT}
    )
    return thread


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        pytest.param({"content": '{"entries": [{"cont', "finish_reason": "length"}, "token limit"),
        pytest.param({"content": None, "refusal": "I can't."}, "refused", id="refusal"),
        pytest.param("I'm sorry, but I can't help with that.", "refused", id="refusal-text"),
        pytest.param({"content": "  "}, "answered no text", id="empty"),
    ],
)
def test_an_unusable_extraction_answer_stores_nothing_and_is_recorded(alice, llm, answer, says):
    thread = _turn(alice)
    llm.script(answer)

    job_run_pending()

    assert not MemoryEntry.objects.exists()
    run = ExtractionRun.objects.get()
    assert run.status == "done" and run.stored == 0 and says in run.rejections[0]["reason"]
    failure = ObservationFailure.objects.get(thread_id=thread)
    assert failure.stage == "extraction" and says in failure.error
    assert (failure.first_seq, failure.last_seq) == (1, 2)


def test_an_extraction_call_failing_is_recorded_and_left_to_the_jobs_retry(alice, llm):
    thread = _turn(alice)
    llm.fail_next(1, 503, "overloaded")

    job_run_pending()

    run = ExtractionRun.objects.get()
    assert run.status == "failed" and "answered 503" in run.error
    assert "answered 503" in ObservationFailure.objects.get(thread_id=thread).error


def test_an_entry_whose_content_drops_an_identifier_of_its_evidence_is_rejected(alice, llm):
    lost = {"content": "A workspace stays locked after renewal.", "evidence": USER}
    kept = {"content": "Workspace ws-4411 stays locked after renewal.", "evidence": USER}
    source = {"source": "user_assertion"}
    llm.script(entries_answer({**lost, **source}, {**kept, **source}))
    _turn(alice)

    job_run_pending()

    assert [e.content for e in MemoryEntry.objects.all()] == [kept["content"]]
    run = ExtractionRun.objects.get()
    assert run.rejections == [
        {"source": "user_assertion", "reason": "content drops ws-4411 of its evidence"}
    ]
