"""Enqueue, claim and execute background jobs.

A job is claimed with a conditional UPDATE (pending → running), so any number of workers, or
a Celery redelivery, can race for it and exactly one runs it. A worker that dies leaves its job
`running`; once the lease expires another worker reclaims it, unless that was the last attempt:
then the job fails (and its kind's failure handler runs), so a job that kills its worker every
time is not reclaimed forever.
"""

import logging
import os
import socket
from datetime import timedelta
from functools import partial

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone

from apps.core.metrics import job_observed
from apps.jobs.models import Job, JobStatus
from apps.jobs.registry import failure_handler_for, handler_for

logger = logging.getLogger(__name__)
WORKER_NAME = f"{socket.gethostname()}"
# How often job_enqueue looks again when a job of the same key appears and goes meanwhile.
_ENQUEUE_TRIES = 5


class PermanentJobError(Exception):
    """A failure that retrying cannot fix; the job fails at once with this message."""


def job_enqueue(*, kind: str, key: str = "", payload: dict | None = None, max_attempts=5) -> Job:
    """Queue a job after the current transaction commits; a pending job with this key is reused."""
    for _ in range(_ENQUEUE_TRIES):
        if key:
            pending = Job.objects.filter(kind=kind, key=key, status=JobStatus.PENDING).first()
            if pending is not None:
                return pending
        try:
            with transaction.atomic():
                job = Job.objects.create(
                    kind=kind, key=key, payload=payload or {}, max_attempts=max_attempts
                )
        except IntegrityError:
            # Another request queued the same key first; a worker may have claimed that job
            # since, so look again rather than assume it is still pending.
            continue
        transaction.on_commit(partial(job_dispatch, job_id=job.id))
        return job
    raise RuntimeError(f"could not queue job {kind}/{key}: its key kept being taken")


def job_dispatch(*, job_id, countdown: float = 0) -> None:
    """Hand the job to Celery when a broker is configured; otherwise the worker polls for it."""
    if not settings.CELERY_BROKER_URL:
        return
    from apps.jobs.tasks import run_job

    try:
        run_job.apply_async(args=[str(job_id)], countdown=countdown)
    except Exception:  # broker down: the periodic sweep dispatches the job again
        logger.warning("could not dispatch job %s; the sweep will retry", job_id, exc_info=True)


def job_claim(*, job_id, worker: str) -> Job | None:
    """Claim one job for this worker; None when it is not due, done, or claimed elsewhere."""
    now = timezone.now()
    claimed = (
        _claimable(now)
        .filter(pk=job_id)
        .update(
            status=JobStatus.RUNNING,
            locked_at=now,
            locked_by=worker[:100],
            attempts=F("attempts") + 1,
            updated_at=now,
        )
    )
    return Job.objects.get(pk=job_id) if claimed else None


def job_claim_from_dead(*, job_id, worker: str) -> Job | None:
    """Claim a running job whose worker process is known dead, without waiting for its lease.

    Celery hands a task's message out again at once when the process running it is lost
    (acks_late and reject_on_worker_lost on run_job), but the job still names that process
    and job_claim() refuses it until JOB_LEASE_SECONDS end. A holder is known dead when it is
    a process of this machine that no longer exists, or a Celery node that does not answer a
    ping; otherwise (a child process lost on another machine) the lease decides, as before.
    On its last attempt the job fails instead, like one whose lease ran out.
    """
    job = Job.objects.filter(pk=job_id, status=JobStatus.RUNNING).first()
    if job is None or not holder_dead(job.locked_by):
        return None
    now = timezone.now()
    # Conditional on the same holder: of several redeliveries exactly one takes the job over.
    held = Job.objects.filter(
        pk=job_id, status=JobStatus.RUNNING, locked_by=job.locked_by, locked_at=job.locked_at
    )
    if job.attempts >= job.max_attempts:
        error = _abandoned_error(job)
        if held.update(
            status=JobStatus.FAILED, error=error, finished_at=now, locked_at=None, updated_at=now
        ):
            logger.warning("job %s (%s) given up: %s", job.id, job.kind, error)
            _run_failure_handler(job, error)
        return None
    claimed = held.update(
        locked_at=now, locked_by=worker[:100], attempts=F("attempts") + 1, updated_at=now
    )
    if claimed:
        logger.warning(
            "job %s (%s) taken over from %s, a dead worker", job_id, job.kind, job.locked_by
        )
    return Job.objects.get(pk=job_id) if claimed else None


def celery_holder(node: str | None) -> str:
    """Name a Celery worker process as a job's holder: its node and its process id.

    run_job called directly (no worker, so no node) runs in this machine's process: naming
    the machine lets holder_dead() ask the process table rather than ping a node that does
    not exist, which would find every direct caller dead and let a duplicate take its job.
    """
    return f"celery:{node or socket.gethostname()}:{os.getpid()}"


def holder_dead(locked_by: str) -> bool:
    """Whether the holder a job names (celery_holder()) is known to be dead."""
    prefix, _, rest = locked_by.partition(":")
    node, _, pid = rest.rpartition(":")
    if prefix != "celery" or not node or not pid.isdigit():
        return False
    if node.rpartition("@")[2] == socket.gethostname():
        try:
            os.kill(int(pid), 0)  # signal 0: only asks whether the process exists
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        return False
    from celery import current_app

    try:
        return not current_app.control.ping(destination=[node], timeout=1.0)
    except Exception:  # the broker is down: nothing is known
        return False


def job_claim_next(*, worker: str) -> Job | None:
    """Claim the job that has waited longest, if any is due."""
    job_fail_abandoned()
    now = timezone.now()
    for job_id in _claimable(now).order_by("run_after").values_list("id", flat=True)[:20]:
        job = job_claim(job_id=job_id, worker=worker)
        if job is not None:
            return job
    return None


def _claimable(now):
    return Job.objects.filter(
        Q(status=JobStatus.PENDING, run_after__lte=now)
        | Q(_expired(now), attempts__lt=F("max_attempts"))
    )


def _expired(now) -> Q:
    stale = now - timedelta(seconds=settings.JOB_LEASE_SECONDS)
    return Q(status=JobStatus.RUNNING, locked_at__lt=stale)


def job_fail_abandoned() -> int:
    """Fail running jobs whose lease expired on their last attempt; return how many."""
    now = timezone.now()
    abandoned = Job.objects.filter(_expired(now), attempts__gte=F("max_attempts"))
    failed = 0
    for job in abandoned[:100]:
        error = _abandoned_error(job)
        # Conditional, so of several sweeps and workers exactly one fails it and runs the hook.
        if abandoned.filter(pk=job.pk).update(
            status=JobStatus.FAILED, error=error, finished_at=now, locked_at=None, updated_at=now
        ):
            logger.warning("job %s (%s) given up: %s", job.id, job.kind, error)
            _run_failure_handler(job, error)
            failed += 1
    return failed


def _abandoned_error(job: Job) -> str:
    if not job.error:  # no attempt raised: every one of them ended with its worker
        times = "once" if job.attempts == 1 else f"{job.attempts} times"
        return f"The worker stopped {times} while running this job; gave up."
    return (
        f"The worker stopped while running the last attempt ({job.attempts} of "
        f"{job.max_attempts}); gave up. An earlier attempt failed with: {job.error}"
    )


def job_execute(*, job: Job) -> Job:
    """Run a claimed job's handler and record the outcome, scheduling a retry on failure."""
    handler = handler_for(job.kind)
    try:
        if handler is None:
            raise PermanentJobError(f"No handler is registered for jobs of kind {job.kind!r}.")
        with job_observed(job.kind):
            handler(job)
    except PermanentJobError as exc:
        _fail(job, str(exc))
    except Exception as exc:
        logger.exception("job %s (%s) failed on attempt %s", job.id, job.kind, job.attempts)
        _retry_or_fail(job, f"{exc.__class__.__name__}: {exc}")
    else:
        _finish(job, JobStatus.SUCCEEDED, "")
    job.refresh_from_db()
    return job


def job_run_pending(*, worker: str = WORKER_NAME, limit: int | None = None) -> int:
    """Run due jobs one after another until none is left (or limit); return how many ran."""
    count = 0
    while limit is None or count < limit:
        job = job_claim_next(worker=worker)
        if job is None:
            break
        job_execute(job=job)
        count += 1
    return count


def job_progress(*, job: Job, done: int, total: int, note: str = "") -> None:
    Job.objects.filter(pk=job.pk).update(
        progress_done=done, progress_total=total, progress_note=note[:200]
    )


def job_sweep() -> int:
    """Dispatch again jobs whose delivery or worker may have been lost; return how many.

    A pending job that waited a minute past its time, and a running job whose lease expired,
    are dispatched again; an expired job on its last attempt fails instead.
    """
    job_fail_abandoned()
    overdue = timezone.now() - timedelta(seconds=60)
    job_ids = list(
        _claimable(timezone.now())
        .filter(Q(status=JobStatus.RUNNING) | Q(run_after__lt=overdue))
        .values_list("id", flat=True)[:500]
    )
    for job_id in job_ids:
        job_dispatch(job_id=job_id)
    return len(job_ids)


def _finish(job: Job, status: str, error: str) -> None:
    now = timezone.now()
    Job.objects.filter(pk=job.pk).update(
        status=status, error=error, finished_at=now, locked_at=None, updated_at=now
    )


def _fail(job: Job, error: str) -> None:
    _finish(job, JobStatus.FAILED, error)
    _run_failure_handler(job, error)


def _run_failure_handler(job: Job, error: str) -> None:
    handler = failure_handler_for(job.kind)
    if handler is None:
        return
    try:
        handler(job, error)
    except Exception:  # the job is failed either way; its rows keep their last state
        logger.exception("the failure handler of job %s (%s) failed", job.id, job.kind)


def _retry_or_fail(job: Job, error: str) -> None:
    if job.attempts >= job.max_attempts:
        _fail(job, f"{error} (gave up after {job.attempts} attempts)")
        return
    delay = min(5 * 2 ** (job.attempts - 1), 600)
    now = timezone.now()
    try:
        with transaction.atomic():
            Job.objects.filter(pk=job.pk).update(
                status=JobStatus.PENDING,
                error=error,
                run_after=now + timedelta(seconds=delay),
                locked_at=None,
                updated_at=now,
            )
    except IntegrityError:
        # A newer pending job with the same key exists and does the same work.
        _finish(job, JobStatus.FAILED, f"{error} (a newer pending job will do this work)")
        return
    job_dispatch(job_id=job.id, countdown=delay)
