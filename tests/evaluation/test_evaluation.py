import json
from datetime import datetime, timedelta

import pytest
from django.utils import timezone

from apps.evaluation.retrieval import ndcg, score
from apps.jobs.services import job_run_pending
from apps.memconfig.services import config_update
from apps.tenancy.models import Project

TINY_SET = {
    "conversations": [
        {
            "id": "c1",
            "user": "Ann",
            "resource": "ann",
            "sessions": [
                {
                    "id": "s1",
                    "turns": [
                        {
                            "role": "user",
                            "content": "My cat is called Pixel.",
                            "created_at": "2025-01-01T10:00:00+00:00",
                        },
                        {
                            "role": "assistant",
                            "content": "Pixel is a lovely name.",
                            "created_at": "2025-01-01T10:00:05+00:00",
                        },
                        {
                            "role": "user",
                            "content": "We bought a new sofa today.",
                            "created_at": "2025-01-02T10:00:00+00:00",
                        },
                    ],
                }
            ],
        }
    ],
    "questions": [
        {
            "id": "q1",
            "type": "exact",
            "conversation": "c1",
            "question": "What is my cat called?",
            "relevant": [
                {"session": "s1", "turn": 0, "grade": 2},
                {"session": "s1", "turn": 1, "grade": 1},
            ],
        },
        {
            "id": "q2",
            "type": "paraphrase",
            "conversation": "c1",
            "question": "Which couch did we get?",
            "relevant": [{"session": "s1", "turn": 2, "grade": 2}],
        },
    ],
}


def test_score_counts_recall_rank_and_graded_gain():
    metrics = score(["s:9", "s:0", "s:1"], {"s:0": 2, "s:1": 1})

    assert metrics["R@5"] == 1.0
    assert metrics["MRR"] == 0.5
    assert 0 < metrics["nDCG@10"] < 1
    assert ndcg(["s:0", "s:1"], {"s:0": 2, "s:1": 1}) == pytest.approx(1.0)


def test_a_run_loads_the_set_into_a_scratch_project_and_keeps_metrics(alice, settings, tmp_path):
    path = tmp_path / "set.json"
    path.write_text(json.dumps(TINY_SET))
    settings.EVALUATION_SET_PATH = path
    project = alice.agent.project
    config_update(
        project=project,
        changes={"embedder_model": "builtin-hash", "embedder_dimensions": 64},
        changed_by="t",
    )
    from apps.evaluation.services import evaluation_start

    run = evaluation_start(project=project, actor="user:ops")
    job_run_pending()
    run.refresh_from_db()

    assert run.status == "done", run.error
    assert run.progress == 100
    assert run.config["embedder_model"] == "builtin-hash"
    assert run.metrics["exact"]["fused"]["R@5"] == 1.0
    assert run.metrics["exact"]["lexical"]["MRR"] == 1.0
    assert run.metrics["all"]["n"] == 2
    assert run.fused_recall_at_10 is not None
    assert list(Project.objects.values_list("slug", flat=True)) == ["acme"]  # scratch removed


def test_a_broken_set_fails_the_run_with_its_reason(alice, settings, tmp_path):
    settings.EVALUATION_SET_PATH = tmp_path / "missing.json"
    from apps.evaluation.services import evaluation_start

    run = evaluation_start(project=alice.agent.project, actor="user:ops")
    job_run_pending()
    run.refresh_from_db()

    assert run.status == "failed"
    assert "missing.json" in run.error
    assert list(Project.objects.values_list("slug", flat=True)) == ["acme"]


def test_evaluation_stops_rather_than_report_vector_figures_without_vectors(alice, settings):
    from apps.evaluation import retrieval
    from apps.providers.fake_openai import FakeOpenAIServer
    from apps.search.vectors import vectors_sync

    settings.OPENAI_MAX_RETRIES = 0
    settings.OPENAI_API_KEY = "test-key"
    project = alice.agent.project
    config_update(
        project=project,
        changes={"embedder_model": "text-embedding-3-small", "embedder_dimensions": 64},
        changed_by="t",
    )
    with FakeOpenAIServer() as fake:
        settings.OPENAI_BASE_URL = fake.base_url
        loaded = retrieval.load_conversations(
            TINY_SET, retrieval.time_shifts(TINY_SET, True), project=project
        )
        vectors_sync(project_id=project.id)
        modes = retrieval.standard_modes()
        assert retrieval.evaluate(loaded, TINY_SET["questions"], modes)  # healthy: figures

        fake.fail_next(10, status=500)
        with pytest.raises(retrieval.EmbedderUnavailable, match="question q1"):
            retrieval.evaluate(loaded, TINY_SET["questions"], modes)


LONG_SET = {
    "conversations": [
        {
            "id": "ops",
            "user": "Maria",
            "resource": "platform",
            "thread": "single",
            "sessions": [
                {
                    "id": "ops-s1",
                    "run": True,
                    "turns": [
                        {
                            "role": "user",
                            "name": "Priya",
                            "content": "Patch forward, keep the old shards.",
                            "created_at": "2025-03-04T10:00:00+00:00",
                        },
                        {
                            "role": "assistant",
                            "content": "Will do.",
                            "created_at": "2025-03-04T10:00:09+00:00",
                        },
                    ],
                },
                {
                    "id": "ops-s2",
                    "run": False,
                    "turns": [
                        {
                            "role": "user",
                            "name": "Tom",
                            "content": "Restart the indexer.",
                            "created_at": "2025-03-09T15:00:00+00:00",
                        },
                    ],
                },
            ],
        }
    ],
    "questions": [
        {
            "id": "t1",
            "type": "temporal",
            "conversation": "ops",
            "question": "What did Priya want on Tuesday March 4th?",
            "template": "What did Priya want on {weekday} {month} {ordinal}?",
            "anchor": "2025-03-04T10:00:00+00:00",
            "relevant": [{"session": "ops-s1", "turn": 0, "grade": 2}],
        }
    ],
}


def test_a_single_thread_conversation_loads_its_sessions_as_runs_with_speakers(alice):
    from apps.evaluation import retrieval
    from apps.threads.models import Message, Run, Thread

    project = alice.agent.project
    shifts = retrieval.time_shifts(LONG_SET, True)
    loaded = retrieval.load_conversations(LONG_SET, shifts, project=project)

    [thread] = Thread.objects.filter(agent__project=project, external_id="ops")
    messages = list(Message.objects.filter(thread=thread).order_by("seq"))
    assert [m.seq for m in messages] == [1, 2, 3]
    assert [m.name for m in messages] == ["Priya", "", "Tom"]
    [run] = Run.objects.filter(thread=thread)
    assert (run.name, run.status) == ("ops-s1", "succeeded")
    assert [m.run_id for m in messages] == [run.id, run.id, None]
    assert sorted(loaded.keys.values()) == ["ops-s1:0", "ops-s1:1", "ops-s2:0"]
    first = LONG_SET["conversations"][0]["sessions"][0]["turns"][0]
    stored = datetime.fromisoformat(first["created_at"])
    assert messages[0].created_at == stored + shifts["ops"]
    assert messages[0].created_at.weekday() == stored.weekday()  # moved by whole weeks
    age = timezone.now() - messages[2].created_at
    assert timedelta(hours=1) <= age <= timedelta(days=7, hours=1)
    assert loaded.asked_at["ops"] == messages[2].created_at + timedelta(hours=1)


def test_a_question_is_ranked_as_of_when_it_is_asked_not_the_hour_of_the_run(alice):
    from apps.evaluation import retrieval
    from apps.search.scope import Scope
    from apps.search.selectors import search

    loaded = retrieval.load_conversations(
        TINY_SET, {"c1": timedelta(0)}, project=alice.agent.project
    )
    asked = loaded.asked_at["c1"]
    scope = Scope(kind="message", project_id=alice.agent.project_id, agent_id=loaded.agent.id)

    def ages(**when):
        hits = search(scopes=[scope], query="cat sofa", top_k=5, signals=("lexical",), **when)
        # The matches' ages (a reply the conversation step lifts has no recency of its own).
        return {
            hit.item.message.content: hit.signals["recency"]["age_days"]
            for hit in hits
            if "recency" in hit.signals
        }

    # The set's messages are from 2025: as of the run's clock they are months old.
    assert ages()["We bought a new sofa today."] > 300
    # As of an hour after the newest message, the newest is an hour old and the first a day.
    assert ages(as_of=asked) == {
        "We bought a new sofa today.": round(1 / 24, 3),
        "My cat is called Pixel.": round(1 + 1 / 24, 3),
    }


def test_a_dated_question_names_the_moved_date():
    from apps.evaluation import retrieval

    [question] = LONG_SET["questions"]

    assert retrieval.question_text(question) == "What did Priya want on Tuesday March 4th?"
    moved = retrieval.question_text(question, timedelta(weeks=60))
    assert moved == "What did Priya want on Tuesday April 28th?"
    assert retrieval.question_text(TINY_SET["questions"][0], timedelta(weeks=9)) == (
        "What is my cat called?"
    )
