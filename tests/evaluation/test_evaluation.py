import json

import pytest

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
