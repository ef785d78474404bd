import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import connections, transaction
from django.utils import timezone

from apps.jobs.models import Job, JobStatus
from apps.jobs.services import job_claim, job_enqueue, job_execute, job_run_pending
from tests.jobs import handlers


@pytest.fixture(autouse=True)
def _clear_runs():
    handlers.RUNS.clear()
    handlers.failures.clear()


def test_it_coalesces_pending_jobs_with_the_same_key(db):
    first = job_enqueue(kind="test.record", key="thread-1")
    again = job_enqueue(kind="test.record", key="thread-1")
    other = job_enqueue(kind="test.record", key="thread-2")

    assert again.id == first.id
    assert other.id != first.id
    assert job_run_pending() == 2
    assert sorted(handlers.RUNS) == ["thread-1", "thread-2"]


def test_a_job_runs_once_and_records_success_and_progress(db):
    job = job_enqueue(kind="test.record", key="k")

    job_run_pending()
    job.refresh_from_db()

    assert job.status == JobStatus.SUCCEEDED
    assert (job.attempts, job.progress_done, job.progress_total) == (1, 1, 1)
    assert job.finished_at is not None
    assert job_run_pending() == 0


def test_a_failed_attempt_is_retried_later_with_the_error_kept(db):
    job = job_enqueue(kind="test.flaky", key="k", payload={"succeed_on": 2})

    job_run_pending()
    job.refresh_from_db()
    assert job.status == JobStatus.PENDING
    assert "attempt 1 failed" in job.error
    assert job.run_after > timezone.now()

    Job.objects.filter(pk=job.pk).update(run_after=timezone.now())
    job_run_pending()
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED
    assert job.attempts == 2
    assert handlers.RUNS == ["k"]


def test_a_job_fails_after_its_last_attempt(db):
    job = job_enqueue(kind="test.flaky", key="k", payload={"succeed_on": 99}, max_attempts=2)

    for _ in range(2):
        Job.objects.filter(pk=job.pk).update(run_after=timezone.now())
        job_run_pending()
    job.refresh_from_db()

    assert job.status == JobStatus.FAILED
    assert "gave up after 2 attempts" in job.error
    assert handlers.failures == [("k", job.error)]


@pytest.mark.parametrize(
    "kind, says",
    [("test.broken", "can never be processed"), ("test.unknown", "No handler is registered")],
)
def test_a_permanent_error_fails_at_once(db, kind, says):
    job = job_enqueue(kind=kind)

    job_run_pending()
    job.refresh_from_db()

    assert job.status == JobStatus.FAILED
    assert job.attempts == 1
    assert says in job.error
    assert handlers.failures == ([(job.key, job.error)] if kind == "test.broken" else [])


def test_a_job_of_a_dead_worker_is_reclaimed_after_its_lease(db, settings):
    settings.JOB_LEASE_SECONDS = 60
    job = job_enqueue(kind="test.record", key="orphan")
    assert job_claim(job_id=job.id, worker="dies") is not None

    assert job_run_pending() == 0  # still within its lease
    Job.objects.filter(pk=job.pk).update(locked_at=timezone.now() - timedelta(seconds=61))
    assert job_run_pending() == 1

    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED
    assert job.attempts == 2
    assert handlers.RUNS == ["orphan"]


def test_a_job_whose_worker_dies_on_every_attempt_fails_instead_of_looping(db, settings):
    settings.JOB_LEASE_SECONDS = 60
    job = job_enqueue(kind="test.record", key="killer", max_attempts=3)
    for attempt in range(1, 4):
        assert job_claim(job_id=job.id, worker=f"dies-{attempt}") is not None
        Job.objects.filter(pk=job.pk).update(locked_at=timezone.now() - timedelta(seconds=61))

    call_command("run_worker", "--once")

    job.refresh_from_db()
    assert (job.status, job.attempts, job.locked_at) == (JobStatus.FAILED, 3, None)
    assert job.error == "The worker stopped 3 times while running this job; gave up."
    assert handlers.failures == [("killer", job.error)]
    assert handlers.RUNS == []
    assert job_run_pending() == 0
    assert handlers.failures == [("killer", job.error)]  # the failure handler ran once


def test_a_job_given_up_after_an_error_and_a_dead_worker_keeps_the_error(db, settings):
    settings.JOB_LEASE_SECONDS = 60
    job = job_enqueue(kind="test.flaky", key="k", payload={"succeed_on": 99}, max_attempts=2)
    job_run_pending()  # attempt 1 raises
    Job.objects.filter(pk=job.pk).update(run_after=timezone.now())
    job_claim(job_id=job.id, worker="dies")  # attempt 2: the worker dies
    Job.objects.filter(pk=job.pk).update(locked_at=timezone.now() - timedelta(seconds=61))

    assert job_run_pending() == 0
    job.refresh_from_db()

    assert job.status == JobStatus.FAILED
    assert "last attempt (2 of 2)" in job.error and "attempt 1 failed" in job.error


def test_a_job_is_claimed_by_exactly_one_of_many_workers(transactional_db):
    job = job_enqueue(kind="test.record", key="contested")
    start = threading.Barrier(8)

    def claim(number):
        start.wait()
        try:
            return job_claim(job_id=job.id, worker=f"w{number}")
        finally:
            connections.close_all()  # or the test database cannot be dropped afterwards

    with ThreadPoolExecutor(8) as pool:
        winners = [claimed for claimed in pool.map(claim, range(8)) if claimed is not None]

    assert len(winners) == 1


def test_a_repeated_delivery_of_a_finished_job_does_nothing(db):
    job = job_enqueue(kind="test.record", key="once")
    job_execute(job=job_claim(job_id=job.id, worker="a"))

    assert job_claim(job_id=job.id, worker="b") is None
    assert handlers.RUNS == ["once"]


def test_the_worker_command_drains_due_jobs(db):
    for key in ("a", "b", "c"):
        job_enqueue(kind="test.record", key=key)

    call_command("run_worker", "--once")

    assert sorted(handlers.RUNS) == ["a", "b", "c"]
    assert not Job.objects.exclude(status=JobStatus.SUCCEEDED).exists()


def test_a_job_enqueued_in_a_rolled_back_transaction_never_exists(db):
    with pytest.raises(RuntimeError), transaction.atomic():
        job_enqueue(kind="test.record", key="ghost")
        raise RuntimeError("request failed")

    assert not Job.objects.filter(key="ghost").exists()
