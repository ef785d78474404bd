"""Celery entry points. They only load a job by id and run it; the database holds its state."""

from celery import shared_task

from apps.jobs.services import job_claim, job_execute, job_sweep


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def run_job(job_id: str) -> None:
    """Run one job; a redelivered or duplicate message finds it claimed and does nothing."""
    job = job_claim(job_id=job_id, worker=f"celery:{run_job.request.hostname}")
    if job is not None:
        job_execute(job=job)


@shared_task(ignore_result=True)
def sweep_jobs() -> None:
    job_sweep()
