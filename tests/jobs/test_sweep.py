"""The periodic sweep, with a real broker and Celery worker: lost deliveries and dead workers."""

from datetime import timedelta

from django.utils import timezone

from apps.jobs.models import Job, JobStatus
from apps.jobs.services import job_claim, job_sweep
from apps.jobs.tasks import sweep_jobs
from tests.jobs import handlers
from tests.jobs.conftest import wait_drained, wait_for


def _lost(key: str, **fields) -> Job:
    """Return a job whose broker message never arrived: it exists but was never dispatched."""
    return Job.objects.create(kind="test.record", key=key, **fields)


def test_a_pending_job_whose_dispatch_was_lost_is_dispatched_again(celery_worker):
    job = _lost("lost", run_after=timezone.now() - timedelta(minutes=2))

    sweep_jobs.delay()

    done = wait_for(job.id, JobStatus.SUCCEEDED)
    assert handlers.RUNS == ["lost"]
    assert done.attempts == 1
    assert done.locked_by.startswith("celery:")


def test_a_recent_pending_job_is_left_to_its_own_delivery(celery_worker, broker_url):
    job = _lost("recent")

    assert job_sweep() == 0
    wait_drained(broker_url)
    assert Job.objects.get(pk=job.pk).status == JobStatus.PENDING
    assert handlers.RUNS == []


def test_an_expired_running_job_is_reclaimed(celery_worker, settings):
    settings.JOB_LEASE_SECONDS = 60
    job = _lost("orphan")
    assert job_claim(job_id=job.id, worker="worker-that-died") is not None
    Job.objects.filter(pk=job.pk).update(locked_at=timezone.now() - timedelta(seconds=61))

    sweep_jobs.delay()

    done = wait_for(job.id, JobStatus.SUCCEEDED)
    assert handlers.RUNS == ["orphan"]
    assert done.attempts == 2
    assert done.locked_by.startswith("celery:")


def test_a_running_job_within_its_lease_is_left_alone(celery_worker, settings, broker_url):
    settings.JOB_LEASE_SECONDS = 60
    job = _lost("busy")
    job_claim(job_id=job.id, worker="alive")

    assert job_sweep() == 0
    wait_drained(broker_url)
    assert (Job.objects.get(pk=job.pk).status, handlers.RUNS) == (JobStatus.RUNNING, [])


def test_finished_jobs_are_left_alone(celery_worker, broker_url):
    old = timezone.now() - timedelta(hours=1)
    done = _lost("done", status=JobStatus.SUCCEEDED, attempts=1, run_after=old, finished_at=old)
    failed = _lost("failed", status=JobStatus.FAILED, attempts=5, run_after=old, error="boom")

    assert job_sweep() == 0
    wait_drained(broker_url)

    assert handlers.RUNS == []
    assert Job.objects.get(pk=done.pk).attempts == 1
    assert (Job.objects.get(pk=failed.pk).status, Job.objects.get(pk=failed.pk).error) == (
        JobStatus.FAILED,
        "boom",
    )


def test_an_expired_job_on_its_last_attempt_fails_instead_of_running_again(celery_worker, settings):
    settings.JOB_LEASE_SECONDS = 60
    handlers.failures.clear()
    job = _lost("doomed", max_attempts=1)
    job_claim(job_id=job.id, worker="worker-that-died")
    Job.objects.filter(pk=job.pk).update(locked_at=timezone.now() - timedelta(seconds=61))

    sweep_jobs.delay()

    failed = wait_for(job.id, JobStatus.FAILED)
    assert "worker stopped once" in failed.error
    assert handlers.failures == [("doomed", failed.error)]
    assert handlers.RUNS == []
