"""A real Celery worker on the local Redis, for tests of delivery through a broker."""

import time

import pytest
from celery.contrib.testing.worker import start_worker

from apps.jobs.models import Job
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


def wait_for(job_id, status, timeout=20.0) -> Job:
    """Return the job once it has the status; fail after timeout seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = Job.objects.get(pk=job_id)
        if job.status == status:
            return job
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} is {Job.objects.get(pk=job_id).status}, not {status}")
