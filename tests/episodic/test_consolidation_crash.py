"""Kill -9 a real worker process in the middle of a consolidation, restart it: no duplicates."""

import os
import signal
from pathlib import Path

from apps.episodic.consolidation import JOB_KIND
from apps.episodic.models import ConsolidationProgress, MemoryEntry
from apps.jobs.models import Job
from apps.providers.fake_openai import FakeOpenAIServer
from apps.threads.models import Thread
from tests.conftest import make_actor
from tests.episodic.test_consolidation import careful_model
from tests.processes import start_run_worker, wait_until, worker_env

ROOT = Path(__file__).resolve().parents[2]


def _worker_env(base_url: str) -> dict:
    """The environment of a worker that uses this test's database and the fake model server."""
    return worker_env(
        JOB_LEASE_SECONDS="2",
        OPENAI_BASE_URL=base_url,
        OPENAI_API_KEY="sk-test",
        OPENAI_MAX_RETRIES="0",
        CELERY_BROKER_URL="",
    )


def _up_to(thread) -> int:
    progress = ConsolidationProgress.objects.filter(thread=thread).first()
    return progress.consolidated_up_to if progress else 0


def test_a_killed_worker_mid_consolidation_and_a_restart_leave_no_duplicates(transactional_db):
    alice = make_actor("acme", "alice")
    thread_id = alice.new_thread(resource_id="dana")["id"]
    for start in range(0, 80, 40):
        alice.append(
            thread_id,
            *[
                {"role": "user", "content": f"Host h-{n} runs nginx 1.{n}."}
                for n in range(start, start + 40)
            ],
        )
    thread = Thread.objects.get(pk=thread_id)
    with FakeOpenAIServer() as fake:
        fake.script(*[careful_model] * 60)
        fake.delay(0.3)  # three calls a batch: about a second per batch of 25 messages
        env = _worker_env(fake.base_url)

        first = start_run_worker(env)  # no job queued: its own schedule finds the thread
        try:
            wait_until(lambda: _up_to(thread) >= 25, 60, "the first batch to be published")
            batch_two = len(fake.bodies("/v1/chat/completions"))
            wait_until(
                lambda: len(fake.bodies("/v1/chat/completions")) > batch_two,
                30,
                "the worker to start judging the second batch",
            )
        finally:
            os.killpg(first.pid, signal.SIGKILL)
            first.wait()

        assert _up_to(thread) == 25
        assert MemoryEntry.objects.filter(thread=thread).count() == 25
        assert Job.objects.get(kind=JOB_KIND).status == "running"

        second = start_run_worker(env)  # no job queued: its own schedule finds the thread
        try:
            wait_until(
                lambda: Job.objects.get(kind=JOB_KIND).status == "succeeded",
                90,
                "a new worker to reclaim and finish the consolidation",
            )
        finally:
            second.send_signal(signal.SIGTERM)
            second.wait(timeout=30)

    entries = MemoryEntry.objects.filter(thread=thread, kind="consolidated")
    seqs = sorted(entry.metadata["first_seq"] for entry in entries)
    assert seqs == list(range(1, 71))  # #71–#80 stay short-term
    assert entries.values("content_hash").distinct().count() == 70
    progress = ConsolidationProgress.objects.get(thread=thread)
    assert (progress.consolidated_up_to, progress.entries_made) == (70, 70)
    assert Job.objects.get(kind=JOB_KIND).attempts == 2
