"""A real Celery worker on the local Redis, for tests of delivery through a broker."""

import os
import time

import pytest
import redis
from celery.contrib.testing.worker import start_worker
from kombu import pools

from apps.jobs.models import Job
from memory_console.celery import app
from tests.jobs import handlers

REDIS = ("127.0.0.1", 6379)
# How long a test process may hold a Redis database; a run that crashed frees its own then.
LEASE_SECONDS = 6 * 3600


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


@pytest.fixture(scope="session")
def broker_url():
    """A Redis database (1-15) of this test process's own, as a broker URL.

    The tests flush their broker's database: runs beside each other on one Redis server (the
    suite on both backends at once, two checkouts) would flush each other's queued messages if
    they shared a fixed database number. Each run leases a free number in database 0 (SET NX
    with an expiry) and gives it back at the end.
    """
    client = redis.Redis(*REDIS, db=0)
    for number in range(1, 16):
        lease = f"memory-console-tests:db{number}"
        if client.set(lease, os.getpid(), nx=True, ex=LEASE_SECONDS):
            try:
                yield f"redis://{REDIS[0]}:{REDIS[1]}/{number}"
            finally:
                client.delete(lease)
                client.close()
            return
    pytest.fail("every Redis database 1-15 is leased by another test run")


@pytest.fixture
def celery_worker(settings, transactional_db, broker_url):
    settings.CELERY_BROKER_URL = broker_url
    use_broker(broker_url)
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


def wait_drained(broker_url: str, timeout: float = 20.0) -> None:
    """Return once every message sent to the broker has been run and acknowledged: its queue
    and its set of unacknowledged messages are empty (tasks acknowledge after they run,
    CELERY_TASK_ACKS_LATE). What has not happened by then will not happen: no sleep needed."""
    client = redis.Redis.from_url(broker_url)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if client.llen("celery") == 0 and client.hlen("unacked") == 0:
                return
            time.sleep(0.02)
    finally:
        client.close()
    raise AssertionError(f"the broker still holds messages after {timeout} s")
