"""Rolling compaction: older messages fold into a versioned summary; raw messages stay."""

import json

from apps.jobs.models import Job
from apps.jobs.services import job_run_pending
from apps.observations.models import Method, Observation, ObservationFailure, ThreadSummary
from apps.observations.prompts import compaction
from apps.observations.selectors import summary_latest
from apps.threads.models import Message
from apps.threads.selectors import thread_get
from tests.observations.conftest import configure, words

HUNDRED = words(96)  # a message of 100 tokens


def _long_thread(actor, count=12) -> str:
    thread = actor.new_thread()["id"]
    actor.append(
        thread,
        *[{"role": "user", "content": f"Order ord-{i}1 shipped. {HUNDRED}"} for i in range(count)],
    )
    return thread


def test_a_thread_near_its_budget_is_summarised_up_to_its_recent_window(alice):
    configure(alice, context_strategy="compaction", compaction_budget_tokens=1000, recent_window=4)
    thread = _long_thread(alice)

    job_run_pending()

    summary = summary_latest(thread=thread_get(agent=alice.agent, thread_id=thread))
    assert summary.covers_up_to_seq == 8
    assert summary.method == Method.EXTRACTIVE
    # Folded in chunks of at most half the budget (500 tokens), a version each.
    assert list(ThreadSummary.objects.filter(thread_id=thread).values_list("version", flat=True))[
        ::-1
    ] == [1, 2]
    assert "ord-71" in summary.content and "ord-81" not in summary.content
    assert Message.objects.filter(thread_id=thread).count() == 12  # raw messages are kept
    assert not Observation.objects.filter(thread_id=thread).exists()


def test_each_compaction_is_a_new_version_that_rolls_the_last_one_forward(alice):
    configure(alice, context_strategy="compaction", compaction_budget_tokens=1000, recent_window=4)
    thread = _long_thread(alice)
    job_run_pending()
    first = ThreadSummary.objects.filter(thread_id=thread).order_by("-version").first()

    alice.append(
        thread, *[{"role": "user", "content": f"Refund ref-{i}9. {HUNDRED}"} for i in range(8)]
    )
    job_run_pending()

    second = ThreadSummary.objects.filter(thread_id=thread).order_by("-version").first()
    assert second.version > first.version and second.covers_up_to_seq == 16
    assert second.content.startswith(first.content)
    assert "ref-39" in second.content
    assert second.message_tokens > first.message_tokens


def test_the_model_summarises_from_the_last_summary_and_the_new_messages(alice, llm):
    # A summary keeps every identifier of what it condenses, or it is refused.
    first = "Shipped " + ", ".join(f"ord-{i}1" for i in range(9)) + "."
    second = "Shipped " + ", ".join(f"ord-{i}1" for i in range(16)) + "."
    llm.script(json.dumps({"summary": first}), json.dumps({"summary": second}))
    configure(
        alice,
        context_strategy="compaction",
        compaction_budget_tokens=2000,
        recent_window=4,
        observer_model="summary-model",
    )

    thread = _long_thread(alice, count=20)
    job_run_pending()

    # 16 messages to fold, at most 1000 tokens at a time: #1–#9, then #10–#16 over the first.
    latest = summary_latest(thread=thread_get(agent=alice.agent, thread_id=thread))
    assert (latest.version, latest.covers_up_to_seq) == (2, 16)
    assert latest.content == second
    assert (latest.model, latest.prompt_version) == ("summary-model", compaction.VERSION)
    first_body, second_body = llm.bodies("/v1/chat/completions")
    assert first_body["model"] == "summary-model"
    assert second_body["messages"][1]["content"].startswith(
        f"Current summary:\n{first}\n\nMessages #10–#16"
    )


def test_a_failing_model_falls_back_to_an_extractive_summary(alice, llm):
    llm.script("no json here")
    configure(alice, context_strategy="compaction", compaction_budget_tokens=1000, recent_window=4)
    thread = _long_thread(alice)

    job_run_pending()

    summary = ThreadSummary.objects.get(thread_id=thread, version=1)
    assert summary.method == Method.EXTRACTIVE and "ord-01" in summary.content
    failure = ObservationFailure.objects.get(thread_id=thread, first_seq=1)
    assert failure.stage == "compaction" and "did not answer JSON" in failure.error


def test_observational_memory_does_not_compact_and_compaction_does_not_observe(alice, bob):
    configure(alice, compaction_budget_tokens=1000, observer_message_tokens=100, recent_window=4)
    configure(bob, context_strategy="compaction", compaction_budget_tokens=1000, recent_window=4)
    mine, theirs = _long_thread(alice), _long_thread(bob)

    job_run_pending()

    assert Observation.objects.filter(thread_id=mine).exists()
    assert not ThreadSummary.objects.filter(thread_id=mine).exists()
    assert ThreadSummary.objects.filter(thread_id=theirs).exists()
    assert not Observation.objects.filter(thread_id=theirs).exists()


def test_the_none_strategy_queues_and_keeps_nothing(alice):
    configure(
        alice,
        context_strategy="none",
        compaction_budget_tokens=1000,
        observer_message_tokens=100,
        recent_window=0,
    )
    thread = _long_thread(alice)

    job_run_pending()

    assert not Job.objects.filter(kind="observations.update").exists()
    assert not Observation.objects.filter(thread_id=thread).exists()
    assert not ThreadSummary.objects.filter(thread_id=thread).exists()


def test_the_extractive_summary_always_ends_within_its_budget(alice):
    """Each run used to append a digest to the last summary (2,002 tokens against a budget of
    1,000); now the summary is condensed and what must go goes oldest and least important
    first, and the summary says how many entries it left out."""
    configure(alice, context_strategy="compaction", compaction_budget_tokens=1000, recent_window=2)
    thread = alice.new_thread()["id"]
    for batch in range(6):
        alice.append(
            thread,
            *[
                {"role": "user", "content": f"Please file ticket T-{batch}{i}. {words(120)}"}
                for i in range(5)
            ],
        )
        job_run_pending()

    versions = ThreadSummary.objects.filter(thread_id=thread).order_by("version")
    assert versions.count() >= 3
    assert all(version.tokens <= 1000 for version in versions)
    latest = versions.last()
    assert "older entries left out" in latest.content
    assert latest.covers_up_to_seq == 28 and "T-52" in latest.content  # the newest stay
