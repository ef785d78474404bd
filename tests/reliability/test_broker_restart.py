"""A broker restart that loses 100 queued messages: the sweep dispatches them again, once each.

A Redis of this test's own (no persistence, on a free port) holds 100 job messages when it is
killed with SIGKILL and started again empty. The jobs are still pending in the database; the
periodic sweep (beat, once a minute; called here once the minute has passed) dispatches them
again, and a real Celery worker runs each exactly once.
"""

import shutil
import signal
import socket
import subprocess
import time
from datetime import timedelta

import pytest
from celery.contrib.testing.worker import start_worker
from django.db import transaction
from django.utils import timezone

from apps.jobs.models import Job, JobStatus
from apps.jobs.services import job_enqueue, job_sweep
from memory_console.celery import app
from tests.jobs import handlers
from tests.jobs.conftest import use_broker

REDIS = shutil.which("redis-server")
JOBS = 100


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _redis(port: int) -> subprocess.Popen:
    server = subprocess.Popen(
        [REDIS, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return server
        except OSError:
            time.sleep(0.05)
    server.kill()
    raise AssertionError("redis-server did not start")


@pytest.fixture
def broker(settings, transactional_db):
    if REDIS is None:
        pytest.skip("redis-server is not installed")
    port = _free_port()
    url = f"redis://127.0.0.1:{port}/0"
    servers = [_redis(port)]
    settings.CELERY_BROKER_URL = url
    use_broker(url)
    handlers.RUNS.clear()

    def restart() -> None:
        servers[-1].send_signal(signal.SIGKILL)
        servers[-1].wait()
        servers.append(_redis(port))

    yield restart
    use_broker(None)
    servers[-1].kill()
    servers[-1].wait()


def _queued() -> int:
    with app.connection_for_write() as conn:
        return conn.default_channel.client.llen("celery")


def test_100_jobs_lost_in_a_broker_restart_all_run_once(broker):
    with transaction.atomic():
        jobs = [job_enqueue(kind="test.record", key=f"job-{n}") for n in range(JOBS)]
    assert _queued() == JOBS  # dispatched on commit, no worker yet

    broker()  # SIGKILL, and back empty: the 100 messages are gone
    assert _queued() == 0
    Job.objects.filter(pk__in=[job.pk for job in jobs]).update(
        run_after=timezone.now() - timedelta(minutes=2)  # the sweep's minute passed
    )

    with start_worker(
        app, pool="threads", concurrency=2, perform_ping_check=False, shutdown_timeout=10
    ):
        assert job_sweep() == JOBS
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if not Job.objects.exclude(status=JobStatus.SUCCEEDED).exists():
                break
            time.sleep(0.1)

    states = Job.objects.filter(pk__in=[job.pk for job in jobs])
    assert set(states.values_list("status", flat=True)) == {JobStatus.SUCCEEDED}
    assert set(states.values_list("attempts", flat=True)) == {1}
    assert sorted(handlers.RUNS) == sorted(f"job-{n}" for n in range(JOBS))
