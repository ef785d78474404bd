import json

from apps.evaluation.models import EvaluationRun
from apps.jobs.services import job_run_pending
from tests.evaluation.test_evaluation import TINY_SET


def test_the_console_page_queues_a_run_and_shows_results(as_role, alice, settings, tmp_path):
    path = tmp_path / "set.json"
    path.write_text(json.dumps(TINY_SET))
    settings.EVALUATION_SET_PATH = path
    client = as_role("operator")

    response = client.post("/console/evaluation/", {"project": str(alice.agent.project.id)})
    assert response.status_code == 302
    polling = client.get("/console/evaluation/")
    assert b'hx-trigger="every 2s"' in polling.content
    job_run_pending()
    page = client.get("/console/evaluation/")

    assert page.status_code == 200
    run = EvaluationRun.objects.get()
    assert b"R@10" in page.content and b"<svg" in page.content
    assert f"{run.fused_recall_at_10:.3f}".encode() in page.content
    assert b'hx-trigger="every 2s"' not in page.content
    compared = client.get("/console/evaluation/", {"compare": [str(run.id)]})
    assert compared.status_code == 200


def test_a_run_without_a_project_choice_is_refused(as_role):
    response = as_role("operator").post("/console/evaluation/", {})

    assert response.status_code == 200
    assert b"Choose a project" in response.content
    assert not EvaluationRun.objects.exists()
