"""Writes of plans, iteration logs, checkpoints and snapshots."""

from django.db import IntegrityError, transaction
from django.db.models import F, Max
from django.utils import timezone

from apps.core.errors import Conflict
from apps.runstate.models import Checkpoint, CheckpointStatus, IterationLog, Plan, RunSnapshot
from apps.threads.models import Run, Thread


def plan_put(*, thread: Thread, expected_version: int, fields: dict) -> Plan:
    """Replace the plan if its version is still expected_version (0 = no plan yet), else 409."""
    if expected_version == 0:
        try:
            with transaction.atomic():
                return Plan.objects.create(thread=thread, version=1, **fields)
        except IntegrityError:
            _raise_stale(thread, expected_version)
    with transaction.atomic():
        updated = Plan.objects.filter(thread=thread, version=expected_version).update(
            version=F("version") + 1, updated_at=timezone.now(), **fields
        )
        if updated:
            # Read while the update's row lock is held, so a concurrent writer's next version
            # is not answered as this one.
            return Plan.objects.get(thread=thread)
    _raise_stale(thread, expected_version)


def _raise_stale(thread: Thread, expected_version: int):
    current = Plan.objects.filter(thread=thread).values_list("version", flat=True).first() or 0
    raise Conflict(
        f"Plan version is {current}, not {expected_version}: reload the plan and apply your "
        "change to the current version.",
        details={"current_version": current},
        code="stale_version",
    )


def iteration_append(
    *,
    thread: Thread,
    task: str,
    outcome: str,
    run: Run | None = None,
    summary: str = "",
    error: str = "",
    metadata: dict | None = None,
) -> IterationLog:
    """Log the next attempt of a task; attempts are numbered 1, 2, 3, … per task and thread.

    The thread row is locked (PostgreSQL: FOR UPDATE; SQLite: the IMMEDIATE transaction) while
    the next number is counted and taken, so concurrent attempts queue instead of colliding:
    retrying on the unique constraint answered 409 once a request lost five times in a row.
    """
    with transaction.atomic():
        Thread.objects.select_for_update().values_list("pk").get(pk=thread.pk)
        last = IterationLog.objects.filter(thread=thread, task=task).aggregate(n=Max("attempt"))
        return IterationLog.objects.create(
            thread=thread,
            run=run,
            task=task,
            attempt=(last["n"] or 0) + 1,
            outcome=outcome,
            summary=summary,
            error=error,
            metadata=metadata or {},
        )


def checkpoint_create(*, run: Run, state: dict, reason: str = "") -> Checkpoint:
    return Checkpoint.objects.create(run=run, state=state, reason=reason)


def checkpoint_resume(*, checkpoint: Checkpoint, resume_input=None) -> Checkpoint:
    """Mark the checkpoint resumed; of concurrent callers exactly one wins, the rest get 409."""
    now = timezone.now()
    claimed = Checkpoint.objects.filter(pk=checkpoint.pk, status=CheckpointStatus.SUSPENDED).update(
        status=CheckpointStatus.RESUMED, resume_input=resume_input, resumed_at=now, updated_at=now
    )
    checkpoint.refresh_from_db()
    if not claimed:
        raise Conflict(
            f"Checkpoint was already resumed at {checkpoint.resumed_at.isoformat()}.",
            code="already_resumed",
        )
    return checkpoint


def snapshot_put(*, run: Run, tree: dict) -> RunSnapshot:
    """Store the run's snapshot, replacing an earlier one."""
    for _ in range(3):
        with transaction.atomic():
            updated = RunSnapshot.objects.filter(run=run).update(
                tree=tree, version=F("version") + 1, updated_at=timezone.now()
            )
            if updated:
                # Read while the update's row lock is held: the answer is this write's version
                # and tree, not those of a request that updated a moment later.
                return RunSnapshot.objects.get(run=run)
        try:
            with transaction.atomic():
                return RunSnapshot.objects.create(run=run, tree=tree)
        except IntegrityError:
            continue  # created concurrently; update it on the next pass
    raise Conflict("The snapshot was changed concurrently; retry.")
