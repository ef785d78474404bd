"""The config API and the thread page say who writes an agent's observations: model or rules."""

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from apps.jobs.services import job_run_pending
from apps.observations.models import Method, Observation
from tests.observations.conftest import configure, faithful_model, words


def _observed_thread(actor) -> str:
    thread = actor.new_thread()["id"]
    actor.append(
        thread, *[{"role": "user", "content": f"Item I-{i}0 {words(96)}"} for i in range(12)]
    )
    job_run_pending()
    return thread


def _thread_page(thread_id) -> str:
    user = User.objects.create_user(username="op", password="pw")
    user.groups.set(Group.objects.filter(name="operator"))
    client = Client()
    client.force_login(user)
    return client.get(f"/console/threads/{thread_id}/").content.decode()


def test_with_an_endpoint_and_a_model_the_model_writes_them_and_both_say_so(alice, llm):
    llm.script(*[faithful_model] * 20)
    configure(alice, observer_message_tokens=1000, recent_window=2, observer_model="model-a")

    thread = _observed_thread(alice)

    assert alice.get("/api/v1/config").json()["memory_work"] == {
        "strategy": "observational",
        "path": "llm",
        "model": "model-a",
        "reason": "",
    }
    assert set(Observation.objects.filter(thread_id=thread).values_list("method", flat=True)) == {
        Method.LLM
    }
    assert "Observations and reflections are written by the model model-a." in _thread_page(thread)


@pytest.mark.parametrize(
    "endpoint, model, reason",
    [
        (False, "model-a", "no LLM endpoint: set OPENAI_API_KEY or OPENAI_BASE_URL"),
        (True, "", "no model: set observer_model"),
    ],
)
def test_without_an_endpoint_or_a_model_the_rules_write_them_and_both_say_why(
    alice, llm, settings, endpoint, model, reason
):
    if not endpoint:
        settings.OPENAI_API_KEY = ""
        settings.OPENAI_BASE_URL = ""
    configure(alice, observer_message_tokens=1000, recent_window=2, observer_model=model)

    thread = _observed_thread(alice)

    work = alice.get("/api/v1/config").json()["memory_work"]
    assert (work["path"], work["reason"]) == ("extractive", reason)
    assert set(Observation.objects.filter(thread_id=thread).values_list("method", flat=True)) == {
        Method.EXTRACTIVE
    }
    assert not llm.bodies("/v1/chat/completions")
    assert f"written by the extractive rules ({reason})" in _thread_page(thread)


def test_a_compacting_agent_is_told_who_writes_its_summaries(alice, llm):
    configure(alice, context_strategy="compaction", observer_model="model-b")

    thread = alice.new_thread()["id"]

    assert alice.get("/api/v1/config").json()["memory_work"]["path"] == "llm"
    assert "Summaries are written by the model model-b." in _thread_page(thread)


def test_with_strategy_none_no_memory_work_runs_and_both_say_so(alice):
    configure(alice, context_strategy="none")

    thread = alice.new_thread()["id"]

    work = alice.get("/api/v1/config").json()["memory_work"]
    assert (work["path"], work["reason"]) == ("off", "context_strategy is none")
    assert "No background memory work: context_strategy is none." in _thread_page(thread)
