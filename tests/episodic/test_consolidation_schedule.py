"""Consolidation is in the one beat schedule, and run_worker runs it without a broker."""

from django.conf import settings

from apps.episodic.consolidation_jobs import JOB_KIND
from apps.jobs.management.commands.run_worker import EmbeddedBeat
from apps.jobs.models import Job
from tests.episodic.test_consolidation import conversation


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def test_the_beat_schedule_runs_the_consolidation_sweep():
    entry = settings.CELERY_BEAT_SCHEDULE["consolidate-threads"]

    assert entry["task"] == "apps.episodic.consolidation_jobs.consolidation_sweep"
    assert entry["schedule"] == 10.0  # the shortest consolidation_interval_seconds allowed


def test_the_embedded_schedule_runs_each_entry_at_start_and_then_at_its_cadence(alice):
    clock = Clock()
    beat = EmbeddedBeat(settings.CELERY_BEAT_SCHEDULE, clock=clock)
    thread = alice.new_thread()
    alice.append(thread["id"], *conversation(30))

    assert sorted(beat.run_due()) == ["consolidate-threads", "sweep-jobs"]
    assert Job.objects.get(kind=JOB_KIND).payload == {"thread_id": thread["id"]}
    clock.now += 9
    assert beat.run_due() == []
    clock.now += 1
    assert beat.run_due() == ["consolidate-threads"]
    clock.now += 50
    assert sorted(beat.run_due()) == ["consolidate-threads", "sweep-jobs"]
