"""A real Celery worker on the local Redis, for tests of delivery through a broker."""

import time

import pytest
from celery.contrib.testing.worker import start_worker
from kombu import pools

from apps.jobs.models import Job
from memory_console.celery import app
from tests.jobs import handlers

BROKER = "redis://127.0.0.1:6379/13"


def use_broker(url: str | None) -> None:
    """Point the Celery app at url, dropping the connections it pooled for the previous broker.

    The app keeps its connection pool and producer pool from its first use in the process: an
    earlier test's broker would otherwise receive this test's messages (and a later test would
    be sent to this test's stopped server).
    """
    app.conf.update(broker_url=url, task_always_eager=False, result_backend=None)
    if app._pool is not None:
        app._pool.force_close_all()
    app._pool = None
    app.amqp._producer_pool = None
    pools.reset()  # kombu's producer pools, kept per broker address across the process


@pytest.fixture
def celery_worker(settings, transactional_db):
    settings.CELERY_BROKER_URL = BROKER
    use_broker(BROKER)
    with app.connection_for_write() as conn:
        conn.default_channel.client.flushdb()
    handlers.RUNS.clear()
    with start_worker(
        app, pool="threads", concurrency=2, perform_ping_check=False, shutdown_timeout=10
    ):
        yield
    use_broker(None)


def wait_for(job_id, status, timeout=20.0) -> Job:
    """Return the job once it has the status; fail after timeout seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = Job.objects.get(pk=job_id)
        if job.status == status:
            return job
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} is {Job.objects.get(pk=job_id).status}, not {status}")
