import signal
import time

from django.core.management.base import BaseCommand

from apps.jobs.services import WORKER_NAME, job_claim_next, job_execute


class Command(BaseCommand):
    help = "Run background jobs from the database (the embedded default; no broker needed)."

    def add_arguments(self, parser):
        parser.add_argument("--once", action="store_true", help="Exit when no job is due.")
        parser.add_argument("--poll", type=float, default=0.5, help="Seconds between polls.")

    def handle(self, *args, once, poll, **options):
        self.stopping = False
        signal.signal(signal.SIGTERM, self._stop)
        signal.signal(signal.SIGINT, self._stop)
        worker = f"worker:{WORKER_NAME}"
        self.stdout.write(f"{worker} polling for jobs every {poll}s")
        while not self.stopping:
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
