from django.db import models
from django.db.models import Q
from django.utils import timezone

from apps.core.ids import uuid7
from apps.core.models import BaseModel


class Thread(BaseModel):
    """A conversation of one agent with one resource; messages are numbered 1, 2, 3, … in it."""

    agent = models.ForeignKey("tenancy.Agent", on_delete=models.CASCADE, related_name="threads")
    resource = models.ForeignKey(
        "tenancy.Resource", on_delete=models.SET_NULL, null=True, blank=True, related_name="threads"
    )
    channel = models.CharField(max_length=64, blank=True)
    external_id = models.CharField(max_length=200, blank=True)
    title = models.CharField(max_length=300, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    last_seq = models.PositiveBigIntegerField(default=0)
    message_count = models.PositiveBigIntegerField(default=0)
    token_count = models.PositiveBigIntegerField(default=0)
    last_message_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["agent", "channel", "external_id"],
                condition=~Q(external_id=""),
                name="thread_channel_external_id_unique_per_agent",
            )
        ]

    def __str__(self):
        return self.title or str(self.id)


class Role(models.TextChoices):
    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"
    TOOL = "tool"


class Kind(models.TextChoices):
    MESSAGE = "message"
    TOOL_CALL = "tool_call"
    TOOL_RESULT = "tool_result"
    ERROR = "error"
    EVENT = "event"


class Message(models.Model):
    """One entry of a thread's log: a message, tool call, tool result, error or event."""

    id = models.UUIDField(primary_key=True, default=uuid7, editable=False)
    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="messages")
    seq = models.PositiveBigIntegerField()
    role = models.CharField(max_length=16, choices=Role.choices)
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.MESSAGE)
    actor = models.CharField(max_length=200, blank=True)
    name = models.CharField(max_length=200, blank=True)
    content = models.TextField(blank=True)
    payload = models.JSONField(null=True, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    token_count = models.PositiveIntegerField(default=0)
    # Set on append by threads.outcome.message_outcome, so that lists count errors without
    # reading every result; a change of that definition back-fills it in a migration.
    is_error = models.BooleanField(default=False)
    run = models.ForeignKey(
        "threads.Run", on_delete=models.SET_NULL, null=True, blank=True, related_name="messages"
    )
    idempotency_key = models.CharField(max_length=200, null=True, blank=True)
    # Client-settable, so that history can be back-filled with its original times.
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["thread", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["thread", "seq"], name="message_seq_unique_in_thread"),
            models.UniqueConstraint(
                fields=["thread", "idempotency_key"],
                condition=Q(idempotency_key__isnull=False),
                name="message_idempotency_key_unique_in_thread",
            ),
        ]
        indexes = [
            models.Index(
                fields=["thread"], condition=Q(is_error=True), name="message_errors_by_thread"
            )
        ]

    def __str__(self):
        return f"{self.thread_id}#{self.seq}"


class RunStatus(models.TextChoices):
    RUNNING = "running"
    # Waiting for a human: the run has a checkpoint no one has resumed yet (runstate).
    SUSPENDED = "suspended"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"


# A run is open until it is finished once, as one of the others.
OPEN_STATUSES = (RunStatus.RUNNING, RunStatus.SUSPENDED)
FINISHED_STATUSES = tuple(status for status in RunStatus.values if status not in OPEN_STATUSES)


class Run(BaseModel):
    """One turn or task of an agent in a thread, from start to finish."""

    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="runs")
    name = models.CharField(max_length=200, blank=True)
    status = models.CharField(max_length=16, choices=RunStatus.choices, default=RunStatus.RUNNING)
    summary = models.TextField(blank=True)
    error = models.TextField(blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self):
        return f"run {self.id} ({self.status})"
