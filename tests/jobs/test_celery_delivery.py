"""Jobs delivered through a real broker (Redis) to a real Celery worker."""

import time

import pytest
from celery.contrib.testing.worker import start_worker
from django.db import transaction

from apps.jobs.models import Job, JobStatus
from apps.jobs.services import job_enqueue
from apps.jobs.tasks import run_job
from memory_console.celery import app
from tests.jobs import handlers

BROKER = "redis://127.0.0.1:6379/13"


@pytest.fixture
def celery_worker(settings, transactional_db):
    settings.CELERY_BROKER_URL = BROKER
    app.conf.update(broker_url=BROKER, task_always_eager=False, result_backend=None)
    with app.connection_for_write() as conn:
        conn.default_channel.client.flushdb()
    handlers.RUNS.clear()
    with start_worker(
        app, pool="threads", concurrency=2, perform_ping_check=False, shutdown_timeout=10
    ):
        yield
    app.conf.update(broker_url=None)


def _wait_for(job_id, status, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = Job.objects.get(pk=job_id)
        if job.status == status:
            return job
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} is {Job.objects.get(pk=job_id).status}, not {status}")


def test_a_committed_job_is_delivered_to_a_celery_worker(celery_worker):
    with transaction.atomic():
        job = job_enqueue(kind="test.record", key="via-broker")

    _wait_for(job.id, JobStatus.SUCCEEDED)

    assert handlers.RUNS == ["via-broker"]


def test_the_same_job_delivered_twice_has_its_effect_once(celery_worker):
    with transaction.atomic():
        job = job_enqueue(kind="test.record", key="twice")
    run_job.delay(str(job.id))
    run_job.delay(str(job.id))

    _wait_for(job.id, JobStatus.SUCCEEDED)
    time.sleep(0.5)  # give the duplicate deliveries time to arrive and be refused

    assert handlers.RUNS == ["twice"]
    assert Job.objects.get(pk=job.id).attempts == 1
