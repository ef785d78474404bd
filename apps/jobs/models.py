from django.db import models
from django.db.models import Q
from django.utils import timezone

from apps.core.models import BaseModel


class JobStatus(models.TextChoices):
    PENDING = "pending"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"


class Job(BaseModel):
    """A unit of background work. Its state lives here, so a lost or repeated delivery is harmless.

    Jobs with the same (kind, key) coalesce while pending: enqueueing again is a no-op.
    """

    kind = models.CharField(max_length=64)
    key = models.CharField(max_length=200, blank=True)
    payload = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=16, choices=JobStatus.choices, default=JobStatus.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    max_attempts = models.PositiveIntegerField(default=5)
    run_after = models.DateTimeField(default=timezone.now)
    locked_at = models.DateTimeField(null=True, blank=True)
    locked_by = models.CharField(max_length=100, blank=True)
    error = models.TextField(blank=True)
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    progress_note = models.CharField(max_length=200, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["status", "run_after"], name="job_status_run_after")]
        constraints = [
            models.UniqueConstraint(
                fields=["kind", "key"],
                condition=Q(status="pending") & ~Q(key=""),
                name="job_one_pending_per_key",
            )
        ]

    def __str__(self):
        return f"{self.kind}:{self.key} ({self.status})"
