from django.db import models

from apps.core.models import BaseModel


class RunStatus(models.TextChoices):
    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


class EvaluationRun(BaseModel):
    """One run of the labelled retrieval set against a project's memory config."""

    project = models.ForeignKey(
        "tenancy.Project", on_delete=models.SET_NULL, null=True, related_name="+"
    )
    started_by = models.CharField(max_length=200)
    status = models.CharField(max_length=16, choices=RunStatus.choices, default=RunStatus.PENDING)
    progress = models.PositiveSmallIntegerField(default=0)
    config = models.JSONField(default=dict, help_text="The memory settings and weights used.")
    metrics = models.JSONField(default=dict, help_text="Mean metrics by question type and mode.")
    error = models.TextField(blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self):
        return f"evaluation {self.created_at:%Y-%m-%d %H:%M} ({self.status})"

    @property
    def fused_recall_at_10(self) -> float | None:
        return self.metrics.get("all", {}).get("fused", {}).get("R@10")

    @property
    def fused_mrr(self) -> float | None:
        return self.metrics.get("all", {}).get("fused", {}).get("MRR")
