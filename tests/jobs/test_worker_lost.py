"""A Celery worker process killed mid-job: its job is taken over at once, not after the lease."""

import os
import signal
import subprocess
import sys
import time

import pytest
from django.db import transaction

from apps.jobs.models import Job, JobStatus
from apps.jobs.services import celery_holder, holder_dead, job_enqueue
from memory_console.celery import app
from tests.jobs.conftest import use_broker, wait_for
from tests.processes import ROOT, database_url, wait_until


@pytest.fixture
def prefork_worker(settings, transactional_db, broker_url):
    """A real `celery worker` (prefork, one child) on Redis, using this test's database."""
    settings.CELERY_BROKER_URL = broker_url
    use_broker(broker_url)
    with app.connection_for_write() as conn:
        conn.default_channel.client.flushdb()
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "CELERY_BROKER_URL": broker_url,
        "JOB_LEASE_SECONDS": "600",  # the takeover must not wait for it
        "DJANGO_SETTINGS_MODULE": "memory_console.settings",
    }
    command = [
        *(sys.executable, "-m", "celery", "-A", "memory_console", "worker"),
        *("--pool", "prefork", "--concurrency", "1", "--include", "tests.jobs.handlers"),
        *("--without-heartbeat", "--without-gossip", "--without-mingle", "--loglevel", "WARNING"),
    ]
    worker = subprocess.Popen(
        command,
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        yield worker
    finally:
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait()
        use_broker(None)


def test_a_killed_worker_process_hands_its_job_over_at_once(prefork_worker):
    with transaction.atomic():
        job = job_enqueue(kind="test.stall_first", key="stalled")

    def holder():
        row = Job.objects.get(pk=job.id)
        return row.status == JobStatus.RUNNING and row.locked_by

    first_holder = wait_until(holder, 60, "the worker to claim the job")
    child = int(first_holder.rsplit(":", 1)[1])
    assert child != prefork_worker.pid  # a pool process runs it, not the worker's main one
    assert not holder_dead(first_holder)

    os.kill(child, signal.SIGKILL)
    started = time.monotonic()
    done = wait_for(job.id, JobStatus.SUCCEEDED, timeout=60)

    assert time.monotonic() - started < 60  # the lease is 600 s
    assert done.attempts == 2
    assert holder_dead(first_holder)
    assert done.locked_by != first_holder


def test_a_holder_is_dead_only_when_known_to_be(db):
    alive = f"celery:celery@{os.uname().nodename}:{os.getpid()}"
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()

    assert not holder_dead(alive)
    assert holder_dead(f"celery:celery@{os.uname().nodename}:{gone.pid}")
    assert not holder_dead("worker-7")  # a run_worker process: the lease decides
    assert not holder_dead("celery:celery@elsewhere")  # no process id named


def test_run_job_called_without_a_worker_names_a_live_holder(db):
    # A direct call has no Celery node: its holder is this machine's process, alive while it
    # runs, so a second delivery of the same job cannot take it over (no node to ping).
    holder = celery_holder(None)

    assert holder == f"celery:{os.uname().nodename}:{os.getpid()}"
    assert not holder_dead(holder)
