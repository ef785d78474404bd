"""Reads of background jobs, for the console."""

from django.db.models import Count, Min
from django.utils import timezone

from apps.jobs.models import Job, JobStatus
from apps.jobs.registry import handler_for, registered_kinds


def job_health() -> dict:
    """Counts by status and the age of the oldest pending job, in seconds."""
    counts = dict(Job.objects.values_list("status").annotate(n=Count("id")))
    oldest = Job.objects.filter(status=JobStatus.PENDING).aggregate(at=Min("created_at"))["at"]
    return {
        "pending": counts.get(JobStatus.PENDING, 0),
        "running": counts.get(JobStatus.RUNNING, 0),
        "failed": counts.get(JobStatus.FAILED, 0),
        "succeeded": counts.get(JobStatus.SUCCEEDED, 0),
        "oldest_pending_seconds": (timezone.now() - oldest).total_seconds() if oldest else None,
    }


def job_kinds() -> list[str]:
    """The kinds of job that have a handler, sorted."""
    return registered_kinds()


def job_kind_known(kind: str) -> bool:
    """Whether jobs of this kind can exist: a handler is registered for it, or one is stored."""
    return handler_for(kind) is not None or Job.objects.filter(kind=kind).exists()


def job_list(*, status: str | None = None, kind: str | None = None):
    jobs = Job.objects.all()
    if status:
        jobs = jobs.filter(status=status)
    if kind:
        jobs = jobs.filter(kind=kind)
    return jobs
