"""Celery entry points. They only load a job by id and run it; the database holds its state."""

from celery import shared_task

from apps.jobs.services import (
    celery_holder,
    job_claim,
    job_claim_from_dead,
    job_execute,
    job_sweep,
)


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def run_job(job_id: str) -> None:
    """Run one job. A duplicate message finds it claimed and does nothing; a message handed out
    again because its worker process died takes the job over from that process."""
    worker = celery_holder(run_job.request.hostname)
    job = job_claim(job_id=job_id, worker=worker) or job_claim_from_dead(
        job_id=job_id, worker=worker
    )
    if job is not None:
        job_execute(job=job)


@shared_task(ignore_result=True)
def sweep_jobs() -> None:
    job_sweep()
