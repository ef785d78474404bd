"""The Observer: ahead of its threshold, outside the recent window, once per range."""

import json

import pytest

from apps.jobs.models import Job, JobStatus
from apps.jobs.services import job_run_pending
from apps.observations import observer as observer_service
from apps.observations.extractive import undated
from apps.observations.models import Method, Observation, ObservationFailure
from apps.observations.prompts import observer
from apps.observations.selectors import observations_active, observed_up_to
from apps.threads.models import Message
from apps.threads.selectors import thread_get
from tests.observations.conftest import configure, words

# A message of exactly 100 tokens: 4 of framing and 96 short words.
HUNDRED = words(96)


def _queued(thread_id) -> int:
    return Job.objects.filter(
        kind="observations.update", key=str(thread_id), status=JobStatus.PENDING
    ).count()


def test_it_queues_the_work_once_unobserved_tokens_reach_80_percent_of_the_threshold(alice):
    configure(alice, observer_message_tokens=1000, recent_window=0)
    thread = alice.new_thread()["id"]

    for _ in range(7):
        alice.append(thread, {"role": "user", "content": HUNDRED})
    assert _queued(thread) == 0  # 700 tokens

    alice.append(thread, {"role": "user", "content": HUNDRED})
    alice.append(thread, {"role": "user", "content": HUNDRED})
    assert _queued(thread) == 1  # 800, then 900: one job per thread


def test_it_observes_everything_before_the_recent_window_and_nothing_in_it(alice):
    configure(alice, observer_message_tokens=1000, recent_window=3)
    thread = alice.new_thread()["id"]
    alice.append(thread, *[{"role": "user", "content": f"step {i} {HUNDRED}"} for i in range(12)])

    job_run_pending()

    model_thread = thread_get(agent=alice.agent, thread_id=thread)
    active = observations_active(thread=model_thread)
    assert observed_up_to(thread=model_thread) == 9
    assert [(row.first_seq, row.last_seq) for row in active] == [(1, 9)]
    assert "[#10]" not in active[0].content
    assert all(row.method == Method.EXTRACTIVE for row in active)


def test_it_observes_a_message_larger_than_the_threshold_alone(alice):
    configure(alice, observer_message_tokens=100, recent_window=1)
    thread = alice.new_thread()["id"]
    alice.append(
        thread,
        {"role": "user", "content": "short one"},
        {"role": "tool", "kind": "error", "name": "build", "content": "Error: " + words(600)},
        {"role": "user", "content": "and the newest"},
    )

    job_run_pending()

    active = observations_active(thread=thread_get(agent=alice.agent, thread_id=thread))
    assert [(row.first_seq, row.last_seq) for row in active] == [(1, 1), (2, 2)]
    assert undated(active[1].content).startswith("[#2] Error (build): Error: note note")


def test_it_stores_the_models_observations_with_its_name_and_prompt_version(alice, llm):
    # Observations keep every identifier of their messages (here the number 10), or are refused.
    llm.script(json.dumps({"observations": ["[#1–11] Asked for Q3 report 0 to 10.", "Sent it."]}))
    configure(alice, observer_message_tokens=100, recent_window=1, observer_model="obs-model")
    thread = alice.new_thread()["id"]
    alice.append(thread, *[{"role": "user", "content": f"Q3 report {i}"} for i in range(12)])

    job_run_pending()

    row = Observation.objects.get(thread_id=thread)
    assert row.content == "[#1–11] Asked for Q3 report 0 to 10.\nSent it."
    assert (row.method, row.model, row.prompt_version) == (Method.LLM, "obs-model", "observer-1")
    body = llm.bodies("/v1/chat/completions")[0]
    assert body["model"] == "obs-model"
    assert body["messages"][0]["content"] == observer.SYSTEM
    assert "#11 user:\nQ3 report 10" in body["messages"][1]["content"]


BAD_OBSERVATIONS = [
    pytest.param("not json", "did not answer JSON", id="not-json"),
    pytest.param(json.dumps({"observations": []}), "no observations", id="empty"),
    pytest.param(json.dumps({"observations": [1, 2]}), "not a list of strings", id="not-text"),
    pytest.param(json.dumps({"notes": ["x"]}), "left out observations", id="missing-key"),
]


@pytest.mark.parametrize("answer, says", BAD_OBSERVATIONS)
def test_a_malformed_answer_falls_back_to_extraction_and_is_recorded(alice, llm, answer, says):
    llm.script(answer)
    configure(alice, observer_message_tokens=100, recent_window=1)
    thread = alice.new_thread()["id"]
    alice.append(thread, *[{"role": "user", "content": f"Fix bug-{i}1"} for i in range(12)])

    job_run_pending()

    row = Observation.objects.get(thread_id=thread)
    assert row.method == Method.EXTRACTIVE and row.model == ""
    assert "[#1] User: Fix bug-01" in undated(row.content)
    failure = ObservationFailure.objects.get(thread_id=thread)
    assert (failure.stage, failure.first_seq, failure.last_seq) == ("observer", 1, 11)
    assert says in failure.error


def test_a_failing_model_falls_back_to_extraction(alice, llm):
    llm.fail_next(1, status=503, message="overloaded")
    configure(alice, observer_message_tokens=100, recent_window=1)
    thread = alice.new_thread()["id"]
    alice.append(thread, *[{"role": "user", "content": f"Fix bug-{i}1"} for i in range(12)])

    job_run_pending()

    assert Observation.objects.get(thread_id=thread).method == Method.EXTRACTIVE
    assert "overloaded" in ObservationFailure.objects.get(thread_id=thread).error


def test_a_range_is_published_once_when_two_jobs_race(alice):
    configure(alice, observer_message_tokens=100_000)  # nothing observes on its own
    thread = alice.new_thread()["id"]
    alice.append(thread, *[{"role": "user", "content": f"m{i}"} for i in range(5)])
    model_thread = thread_get(agent=alice.agent, thread_id=thread)
    observer_service.progress_get(thread=model_thread)
    chunk = list(Message.objects.filter(thread_id=thread, seq__lte=3).order_by("seq"))

    first = observer_service._publish(model_thread, chunk, "one", Method.EXTRACTIVE, None)
    second = observer_service._publish(model_thread, chunk, "two", Method.EXTRACTIVE, None)

    assert first is not None and second is None
    assert list(Observation.objects.filter(thread_id=thread)) == [first]


def test_a_job_for_a_deleted_thread_succeeds_without_work(alice):
    configure(alice, observer_message_tokens=100, recent_window=0)
    thread = alice.new_thread()["id"]
    alice.append(thread, {"role": "user", "content": HUNDRED})
    alice.delete(f"/api/v1/threads/{thread}")

    job_run_pending()

    job = Job.objects.get(kind="observations.update", key=str(thread))
    assert job.status == JobStatus.SUCCEEDED
