from django.db import models

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


class EntryStatus(models.TextChoices):
    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"
    SUPERSEDED = "superseded"


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
        constraints = [
            # resource may be null; the service checks null-resource duplicates itself.
            models.UniqueConstraint(
                fields=["agent", "resource", "content_hash"], name="entry_hash_unique_in_scope"
            )
        ]

    def __str__(self):
        return self.content[:60]
