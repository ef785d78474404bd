"""Job kinds used by the job tests: they record each run so tests can count effects."""

import threading

from apps.jobs.registry import job_failure_handler, job_handler
from apps.jobs.services import PermanentJobError, job_progress

RUNS: list[str] = []
failures: list[tuple[str, str]] = []  # (key, error) of each test job that failed for good
_lock = threading.Lock()


@job_handler("test.record")
def record(job):
    with _lock:
        RUNS.append(job.key)
    job_progress(job=job, done=1, total=1, note="recorded")


@job_failure_handler("test.record")
@job_failure_handler("test.flaky")
@job_failure_handler("test.broken")
def record_failure(job, error):
    with _lock:
        failures.append((job.key, error))


@job_handler("test.flaky")
def flaky(job):
    """Fail until the job's attempt number reaches payload['succeed_on']."""
    if job.attempts < job.payload["succeed_on"]:
        raise RuntimeError(f"attempt {job.attempts} failed")
    with _lock:
        RUNS.append(job.key)


@job_handler("test.broken")
def broken(job):
    raise PermanentJobError("the input can never be processed")


@job_handler("test.stall_first")
def stall_first(job):
    """Hang on the first attempt (its worker process is killed meanwhile); record the next."""
    if job.attempts == 1:
        import time

        time.sleep(120)
    with _lock:
        RUNS.append(job.key)
