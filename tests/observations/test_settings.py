"""Each memory setting this app reads changes what it does."""

import json

import pytest

from apps.core.errors import ApplicationError
from apps.jobs.services import job_run_pending
from apps.memconfig.schema import BY_KEY
from apps.observations.models import Observation, ThreadSummary
from apps.observations.selectors import observed_up_to
from apps.threads.selectors import thread_get
from tests.observations.conftest import configure, words

HUNDRED = words(96)


def _thread(actor, count=12) -> str:
    thread = actor.new_thread()["id"]
    actor.append(
        thread, *[{"role": "user", "content": f"Item I-{i}0 {HUNDRED}"} for i in range(count)]
    )
    job_run_pending()
    return thread


def _up_to(actor, thread) -> int:
    return observed_up_to(thread=thread_get(agent=actor.agent, thread_id=thread))


@pytest.mark.parametrize("window, expected", [(2, 10), (5, 7)])
def test_recent_window_is_the_boundary_the_observer_leaves_alone(alice, window, expected):
    configure(alice, observer_message_tokens=1000, recent_window=window)

    assert _up_to(alice, _thread(alice)) == expected


@pytest.mark.parametrize("threshold, observed", [(1000, True), (2000, False)])
def test_observer_message_tokens_is_the_threshold_the_observer_waits_for(
    alice, threshold, observed
):
    configure(alice, observer_message_tokens=threshold, recent_window=2)  # 12 × ~100 tokens

    assert (_up_to(alice, _thread(alice)) > 0) is observed


@pytest.mark.parametrize("threshold, reflected", [(300, True), (100_000, False)])
def test_reflector_observation_tokens_is_the_threshold_of_a_reflection(alice, threshold, reflected):
    configure(
        alice, observer_message_tokens=200, reflector_observation_tokens=threshold, recent_window=2
    )

    thread = _thread(alice)

    assert Observation.objects.filter(thread_id=thread, is_reflection=True).exists() is reflected


@pytest.mark.parametrize("model, asked", [("model-a", {"model-a"}), ("", set())])
def test_observer_model_names_the_model_asked_and_empty_means_extraction(alice, llm, model, asked):
    llm.script(json.dumps({"observations": ["Listed items I-00 … I-90."]}))
    configure(alice, observer_message_tokens=1000, recent_window=2, observer_model=model)

    thread = _thread(alice)

    assert {body["model"] for body in llm.bodies("/v1/chat/completions")} == asked
    assert set(Observation.objects.filter(thread_id=thread).values_list("model", flat=True)) <= (
        asked | {""}
    )


@pytest.mark.parametrize("budget, compacted", [(1000, True), (5000, False)])
def test_compaction_budget_tokens_is_the_budget_compaction_keeps_under(alice, budget, compacted):
    configure(
        alice, context_strategy="compaction", compaction_budget_tokens=budget, recent_window=2
    )

    thread = _thread(alice)

    assert ThreadSummary.objects.filter(thread_id=thread).exists() is compacted


@pytest.mark.parametrize(
    "strategy, observed, summarised",
    [("observational", True, False), ("compaction", False, True), ("none", False, False)],
)
def test_context_strategy_decides_which_work_runs(alice, strategy, observed, summarised):
    configure(
        alice,
        context_strategy=strategy,
        observer_message_tokens=1000,
        compaction_budget_tokens=1000,
        recent_window=2,
    )

    thread = _thread(alice)

    assert Observation.objects.filter(thread_id=thread).exists() is observed
    assert ThreadSummary.objects.filter(thread_id=thread).exists() is summarised


def test_context_strategy_refuses_other_values_naming_the_allowed_ones(alice):
    with pytest.raises(ApplicationError) as refused:
        configure(alice, context_strategy="summarise")

    assert str(refused.value) == (
        "context_strategy: must be one of observational, compaction, none"
    )


def test_a_str_setting_without_choices_still_takes_any_text():
    assert BY_KEY["observer_model"].parse("  any/model-name  ") == "any/model-name"
    assert BY_KEY["context_strategy"].parse(" compaction ") == "compaction"
