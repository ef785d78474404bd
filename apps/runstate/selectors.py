"""Reads of plans, iteration logs, checkpoints, snapshots and artifacts, in one agent's scope."""

import uuid

from apps.core.errors import NotFound
from apps.runstate.models import Artifact, Checkpoint, IterationLog, Plan, RunSnapshot
from apps.tenancy.models import Agent
from apps.threads.models import Run, Thread


def plan_get(*, thread: Thread) -> Plan | None:
    return Plan.objects.filter(thread=thread).first()


def iteration_list(*, thread: Thread, task: str | None = None):
    iterations = IterationLog.objects.filter(thread=thread)
    if task is not None:
        iterations = iterations.filter(task=task)
    return iterations


def checkpoint_list(*, run: Run):
    return Checkpoint.objects.filter(run=run)


def checkpoint_get(*, agent: Agent, checkpoint_id: uuid.UUID) -> Checkpoint:
    checkpoint = Checkpoint.objects.filter(run__thread__agent=agent, pk=checkpoint_id).first()
    if checkpoint is None:
        raise NotFound("No such checkpoint.")
    return checkpoint


def snapshot_get(*, run: Run) -> RunSnapshot:
    snapshot = RunSnapshot.objects.filter(run=run).first()
    if snapshot is None:
        raise NotFound("This run has no snapshot yet; PUT one first.", code="no_snapshot")
    return snapshot


def run_state_for_thread(*, thread: Thread) -> dict:
    """Everything the console shows beside a thread's timeline."""
    # Newest first by creation time: ids alone order only by the millisecond (UUIDv7).
    newest = ("-created_at", "-id")
    runs = list(Run.objects.filter(thread=thread).order_by(*newest)[:50])
    return {
        "plan": plan_get(thread=thread),
        "iterations": list(IterationLog.objects.filter(thread=thread).order_by(*newest)[:30]),
        "checkpoints": list(
            Checkpoint.objects.filter(run__thread=thread)
            .select_related("run")
            .order_by(*newest)[:30]
        ),
        "snapshots": list(
            RunSnapshot.objects.filter(run__thread=thread)
            .select_related("run")
            .order_by(*newest)[:10]
        ),
        "runs": runs,
    }


def artifact_list(*, thread: Thread, run_id: uuid.UUID | None = None):
    """The thread's artifacts, without their bytes."""
    artifacts = Artifact.objects.filter(thread=thread).defer("content")
    if run_id is not None:
        artifacts = artifacts.filter(run_id=run_id)
    return artifacts


def artifact_get(*, agent: Agent, artifact_id: uuid.UUID) -> Artifact:
    artifact = (
        Artifact.objects.select_related("run__thread__agent")
        .filter(thread__agent=agent, pk=artifact_id)
        .first()
    )
    if artifact is None:
        raise NotFound("No such artifact.")
    return artifact


def artifacts_of_runs(*, run_ids) -> dict:
    """The artifacts of the given runs (without their bytes), by run id, oldest first."""
    by_run: dict = {}
    for artifact in Artifact.objects.filter(run_id__in=list(run_ids)).defer("content"):
        by_run.setdefault(artifact.run_id, []).append(artifact)
    return by_run


def artifact_for_operator(*, artifact_id: uuid.UUID) -> Artifact:
    artifact = Artifact.objects.filter(pk=artifact_id).first()
    if artifact is None:
        raise NotFound("No such artifact: it may have been deleted.")
    return artifact
