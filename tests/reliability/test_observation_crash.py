"""Kill -9 a real worker while the Observer's model call is in flight, then start another.

Nothing of the interrupted attempt is visible (no observation, progress unmoved); a new worker
reclaims the job once its lease ends and the thread is observed exactly once. The same property
for ingestion and consolidation: tests/knowledge/test_worker_crash.py and
tests/episodic/test_consolidation_crash.py; the worker helpers are tests/processes.py.
"""

import json
import os
import signal

from apps.jobs.models import Job
from apps.memconfig.services import config_update
from apps.observations.models import Observation
from apps.observations.selectors import observed_up_to
from apps.observations.services import JOB_KIND
from apps.providers.fake_openai import FakeOpenAIServer
from apps.threads.models import Thread
from tests.conftest import make_actor
from tests.processes import start_run_worker, wait_until, worker_env

ANSWER = json.dumps({"observations": ["[#1–11] Asked for Q3 report 0 to 10, eleven times."]})


def test_a_killed_worker_mid_observation_leaves_nothing_and_a_restart_observes_once(
    transactional_db,
):
    alice = make_actor("acme", "alice")
    config_update(
        agent=alice.agent,
        changes={"observer_message_tokens": 100, "recent_window": 1, "observer_model": "obs"},
        changed_by="test",
    )
    thread_id = alice.new_thread()["id"]
    alice.append(thread_id, *[{"role": "user", "content": f"Q3 report {n}"} for n in range(12)])
    thread = Thread.objects.get(pk=thread_id)
    job = Job.objects.get(kind=JOB_KIND, key=thread_id)
    with FakeOpenAIServer() as fake:
        fake.script(ANSWER, ANSWER, ANSWER)
        fake.delay(1.5)
        env = worker_env(
            JOB_LEASE_SECONDS="2",
            OPENAI_BASE_URL=fake.base_url,
            OPENAI_API_KEY="sk-test",
            OPENAI_MAX_RETRIES="0",
            CELERY_BROKER_URL="",
        )

        first = start_run_worker(env)
        try:
            wait_until(lambda: fake.bodies("/v1/chat/completions"), 60, "the Observer's model call")
        finally:
            os.killpg(first.pid, signal.SIGKILL)
            first.wait()

        assert Job.objects.get(pk=job.pk).status == "running"
        assert not Observation.objects.filter(thread=thread).exists()
        assert observed_up_to(thread=thread) == 0

        fake.delay(0)
        second = start_run_worker(env)
        try:
            wait_until(
                lambda: Job.objects.get(pk=job.pk).status == "succeeded",
                90,
                "a new worker to reclaim and finish the observation",
            )
        finally:
            second.send_signal(signal.SIGTERM)
            second.wait(timeout=30)

    rows = Observation.objects.filter(thread=thread)
    assert [(row.first_seq, row.last_seq, row.content) for row in rows] == [
        (1, 11, "[#1–11] Asked for Q3 report 0 to 10, eleven times.")
    ]
    assert observed_up_to(thread=thread) == 11
    assert Job.objects.get(pk=job.pk).attempts == 2
