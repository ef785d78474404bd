from django.db import models

from apps.core.models import BaseModel


class Plan(BaseModel):
    """The current execution plan of a thread; `version` guards compare-and-set updates."""

    thread = models.OneToOneField("threads.Thread", on_delete=models.CASCADE, related_name="plan")
    version = models.PositiveIntegerField(default=1)
    goal = models.TextField(blank=True)
    phase = models.CharField(max_length=200, blank=True)
    iteration = models.PositiveIntegerField(default=0)
    steps = models.JSONField(default=list, blank=True)
    metadata = models.JSONField(default=dict, blank=True)

    def __str__(self):
        return f"plan v{self.version} of {self.thread_id}"


class IterationOutcome(models.TextChoices):
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    ABANDONED = "abandoned"


class IterationLog(BaseModel):
    """One attempt at a task of a thread; failed attempts brief the next sub-agent on retry."""

    thread = models.ForeignKey(
        "threads.Thread", on_delete=models.CASCADE, related_name="iterations"
    )
    run = models.ForeignKey("threads.Run", on_delete=models.SET_NULL, null=True, blank=True)
    task = models.CharField(max_length=200)
    attempt = models.PositiveIntegerField()
    outcome = models.CharField(max_length=16, choices=IterationOutcome.choices)
    summary = models.TextField(blank=True)
    error = models.TextField(blank=True)
    metadata = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["thread", "task", "attempt"], name="iteration_attempt_unique"
            )
        ]

    def __str__(self):
        return f"{self.task} attempt {self.attempt} ({self.outcome})"


class CheckpointStatus(models.TextChoices):
    SUSPENDED = "suspended"
    RESUMED = "resumed"


class Checkpoint(BaseModel):
    """Suspended state of a run waiting for a human; resumed at most once."""

    run = models.ForeignKey("threads.Run", on_delete=models.CASCADE, related_name="checkpoints")
    status = models.CharField(
        max_length=16, choices=CheckpointStatus.choices, default=CheckpointStatus.SUSPENDED
    )
    reason = models.CharField(max_length=500, blank=True)
    state = models.JSONField(default=dict)
    resume_input = models.JSONField(null=True, blank=True)
    resumed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]

    def __str__(self):
        return f"checkpoint {self.id} ({self.status})"


class RunSnapshot(BaseModel):
    """The UI agent tree of a run, kept so visible progress survives reconnects."""

    run = models.OneToOneField("threads.Run", on_delete=models.CASCADE, related_name="snapshot")
    tree = models.JSONField(default=dict)
    version = models.PositiveIntegerField(default=1)

    def __str__(self):
        return f"snapshot v{self.version} of {self.run_id}"


class Artifact(BaseModel):
    """A file a run produced (a spec, a report, generated code), kept with its thread.

    The bytes live in the row, not in file storage: artifacts are small (ARTIFACT_MAX_BYTES),
    and a row goes with its thread's cascade delete, where a stored file would be left behind.
    """

    thread = models.ForeignKey("threads.Thread", on_delete=models.CASCADE, related_name="+")
    run = models.ForeignKey("threads.Run", on_delete=models.CASCADE, related_name="artifacts")
    name = models.CharField(max_length=255)
    kind = models.CharField(max_length=64)
    content_type = models.CharField(max_length=255)
    size_bytes = models.PositiveBigIntegerField()
    sha256 = models.CharField(max_length=64)
    content = models.BinaryField()
    created_by = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["thread", "id"], name="artifact_thread")]

    def __str__(self):
        return f"artifact {self.name} of {self.run_id}"
