import logging
import signal
import time
from datetime import timedelta

from django.conf import settings
from django.core.management.base import BaseCommand
from django.utils.module_loading import import_string

from apps.core.metrics import metrics_server_start
from apps.jobs.services import WORKER_NAME, job_claim_next, job_execute

logger = logging.getLogger(__name__)


class EmbeddedBeat:
    """Run the beat schedule's tasks in this process, for the embedded default without a broker.

    With a broker, Celery beat runs the schedule; without one there is no beat, so the worker
    calls each task itself at its cadence (first at start). Every scheduled task is idempotent,
    so several embedded workers running the same entry do no harm.
    """

    def __init__(self, schedule: dict, clock=time.monotonic):
        self.clock = clock
        self.entries = {}
        for name, entry in schedule.items():
            every = entry["schedule"]
            if isinstance(every, timedelta):
                every = every.total_seconds()
            if not isinstance(every, int | float):
                logger.warning("schedule entry %s is not an interval; the worker skips it", name)
                continue
            self.entries[name] = (entry["task"], float(every))
        self.next_run = {name: clock() for name in self.entries}

    def run_due(self) -> list[str]:
        """Run every entry whose time has come; return their names."""
        ran = []
        for name, (task, every) in self.entries.items():
            if self.clock() < self.next_run[name]:
                continue
            try:
                import_string(task)()
            except Exception:  # one failing entry must not stop the worker or the others
                logger.exception("scheduled task %s failed", name)
            self.next_run[name] = self.clock() + every
            ran.append(name)
        return ran


class Command(BaseCommand):
    help = (
        "Run background jobs from the database (the embedded default; no broker needed), and "
        "the periodic schedule when no broker is configured."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--once", action="store_true", help="Exit when no job is due (no schedule)."
        )
        parser.add_argument("--poll", type=float, default=0.5, help="Seconds between polls.")
        parser.add_argument(
            "--no-schedule", action="store_true", help="Do not run the periodic schedule."
        )

    def handle(self, *args, once, poll, no_schedule, **options):
        self.stopping = False
        signal.signal(signal.SIGTERM, self._stop)
        signal.signal(signal.SIGINT, self._stop)
        worker = f"worker:{WORKER_NAME}"
        beat = None
        # --once drains the jobs that are due and leaves; the schedule is for a worker that stays.
        if not (once or no_schedule or settings.CELERY_BROKER_URL):
            beat = EmbeddedBeat(settings.CELERY_BEAT_SCHEDULE)
        if not once and settings.WORKER_METRICS_PORT and settings.METRICS_TOKEN:
            # The jobs' own figures (durations, LLM calls) live in this process: serve them.
            metrics_server_start(port=settings.WORKER_METRICS_PORT, token=settings.METRICS_TOKEN)
        self.stdout.write(f"{worker} polling for jobs every {poll}s")
        while not self.stopping:
            if beat is not None:
                beat.run_due()
            job = job_claim_next(worker=worker)
            if job is None:
                if once:
                    break
                time.sleep(poll)
                continue
            job = job_execute(job=job)
            self.stdout.write(f"{job.kind} {job.key} → {job.status} (attempt {job.attempts})")

    def _stop(self, signum, frame):
        # Finish the job at hand, then leave; an unfinished one would wait for its lease.
        self.stopping = True
