"""Consolidation is in the one beat schedule, and run_worker runs it without a broker."""

from django.conf import settings

from apps.episodic.consolidation import JOB_KIND
from apps.jobs.management.commands.run_worker import EmbeddedBeat
from apps.jobs.models import Job
from memory_console.celery import app
from tests.episodic.test_consolidation import conversation


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def test_the_beat_schedule_runs_the_consolidation_sweep():
    entry = settings.CELERY_BEAT_SCHEDULE["consolidate-threads"]

    assert entry["task"] == "apps.episodic.consolidation.jobs.consolidation_sweep"
    assert entry["schedule"] == 10.0  # the shortest consolidation_interval_seconds allowed


def test_every_scheduled_task_is_registered_with_celery_under_the_name_it_is_sent_by():
    # Celery beat sends a task by name and the worker looks it up by that name: a module moved
    # without its schedule entry would leave the sweep unregistered, with no error until then.
    app.loader.import_default_modules()  # what a worker does at start (tasks.py of each app)

    unknown = [
        entry["task"]
        for entry in settings.CELERY_BEAT_SCHEDULE.values()
        if entry["task"] not in app.tasks
    ]

    assert unknown == []


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
