from django.db import models
from django.db.models import Q

from apps.core.models import BaseModel


class EntryKind(models.TextChoices):
    EPISODIC = "episodic"
    FACT = "fact"
    CONSOLIDATED = "consolidated"


class EntrySource(models.TextChoices):
    USER_ASSERTION = "user_assertion"
    USER_ACCEPTED_ASSISTANT_PROPOSAL = "user_accepted_assistant_proposal"
    VERIFIED_ASSISTANT_FINDING = "verified_assistant_finding"
    CONSOLIDATION = "consolidation"
    OPERATOR = "operator"
    API = "api"
    MEMORY_ACTION = "memory_action"  # a [[MEMORY: …]] the agent wrote in its answer


class EntryStatus(models.TextChoices):
    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"
    SUPERSEDED = "superseded"


# Entries that still speak for their scope; rejected and superseded ones are kept for the record.
LIVE_STATUSES = [EntryStatus.PENDING.value, EntryStatus.APPROVED.value]


class MemoryEntry(BaseModel):
    """A source-backed note an agent keeps about one resource, with exact evidence."""

    agent = models.ForeignKey("tenancy.Agent", on_delete=models.CASCADE, related_name="+")
    resource = models.ForeignKey(
        "tenancy.Resource", on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    kind = models.CharField(max_length=16, choices=EntryKind.choices, default=EntryKind.EPISODIC)
    content = models.TextField()
    content_hash = models.CharField(max_length=64)
    source = models.CharField(max_length=40, choices=EntrySource.choices)
    evidence = models.TextField(blank=True)
    thread = models.ForeignKey(
        "threads.Thread", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    message = models.ForeignKey(
        "threads.Message", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    status = models.CharField(
        max_length=16, choices=EntryStatus.choices, default=EntryStatus.PENDING
    )
    status_changed_by = models.CharField(max_length=200, blank=True)
    status_changed_at = models.DateTimeField(null=True, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    recall_count = models.PositiveIntegerField(default=0)
    last_recalled_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        # One live entry per content hash and scope (agent + resource), held by the database so
        # concurrent proposals store one row. Two partial constraints, because a unique index
        # treats NULL resources as distinct on both backends, and nulls_distinct=False is not
        # supported by SQLite (Django leaves such a constraint out there altogether).
        constraints = [
            models.UniqueConstraint(
                fields=["agent", "resource", "content_hash"],
                condition=Q(status__in=LIVE_STATUSES, resource__isnull=False),
                name="entry_hash_unique_live_in_resource",
            ),
            models.UniqueConstraint(
                fields=["agent", "content_hash"],
                condition=Q(status__in=LIVE_STATUSES, resource__isnull=True),
                name="entry_hash_unique_live_without_resource",
            ),
        ]

    def __str__(self):
        return self.content[:60]
