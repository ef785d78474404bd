"""Start and carry out retrieval evaluation runs (in the background)."""

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps.evaluation import retrieval
from apps.evaluation.models import EvaluationRun, RunStatus
from apps.jobs.services import job_enqueue
from apps.memconfig.selectors import config_effective_for_project, config_level_get
from apps.memconfig.services import config_update
from apps.search.fusion import weights_json
from apps.search.selectors import default_weights
from apps.search.vectors import vectors_sync
from apps.tenancy.models import Project

JOB_KIND = "evaluation.run"


def evaluation_start(*, project: Project, actor: str) -> EvaluationRun:
    """Queue a run of the labelled set with this project's memory config."""
    with transaction.atomic():
        run = EvaluationRun.objects.create(project=project, started_by=actor)
        job_enqueue(kind=JOB_KIND, key=str(run.id), payload={"run_id": str(run.id)}, max_attempts=1)
    return run


def evaluation_execute(*, run_id) -> None:
    """Load the set into a scratch project with the same config, ask every question, keep
    the metrics, and delete the scratch project.

    1. Create the scratch project and copy the chosen project's own settings into it.
    2. Load the conversations and embed them (when the config names an embedder).
    3. Ask every question lexical only, vector only and fused; average per question type.
    """
    run = EvaluationRun.objects.select_related("project").get(pk=run_id)
    EvaluationRun.objects.filter(pk=run.pk).update(status=RunStatus.RUNNING, progress=1)
    scratch = Project.objects.create(slug=f"evaluation-{run.id.hex[:12]}", name="evaluation")
    try:
        _copy_config(run.project, scratch)
        data = retrieval.set_load(settings.EVALUATION_SET_PATH)
        loaded = retrieval.load_conversations(
            data, retrieval.time_shifts(data, True), project=scratch
        )
        _progress(run, 20)
        vectors_sync(project_id=scratch.id)  # embed now rather than in a job of its own
        modes = retrieval.standard_modes()
        rows = retrieval.evaluate(
            loaded,
            data["questions"],
            modes,
            progress=lambda done, total: _progress(run, 20 + 79 * done // total, every=10),
        )
        config = config_effective_for_project(project_id=scratch.id).values
        EvaluationRun.objects.filter(pk=run.pk).update(
            status=RunStatus.DONE,
            progress=100,
            metrics=retrieval.aggregate(rows, modes),
            config={**config, "weights": weights_json(default_weights())},
            finished_at=timezone.now(),
        )
    except Exception as exc:
        EvaluationRun.objects.filter(pk=run.pk).update(
            status=RunStatus.FAILED,
            error=f"{exc.__class__.__name__}: {exc}",
            finished_at=timezone.now(),
        )
        raise
    finally:
        scratch.delete()


def _copy_config(source: Project | None, scratch: Project) -> None:
    level = config_level_get(project=source) if source else None
    if level and level.values:
        config_update(project=scratch, changes=dict(level.values), changed_by="evaluation")


def _progress(run: EvaluationRun, percent: int, every: int = 1) -> None:
    if percent % every == 0:
        EvaluationRun.objects.filter(pk=run.pk).update(progress=percent)
