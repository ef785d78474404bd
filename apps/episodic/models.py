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
    # Each edit of the text adds one; the audit log keeps every earlier text.
    version = models.PositiveIntegerField(default=1)
    # Knowledge updates. `supersedes` names the older entry of the scope this one replaces (the
    # extractor's or an agent's claim); it takes effect when this entry is approved, and then
    # the older one becomes superseded with `superseded_by` pointing here. Nothing is deleted:
    # the chain stays, and [valid_from, valid_to) says when an entry was approved and current,
    # so recall can answer as of an earlier time.
    supersedes = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    superseded_by = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    valid_from = models.DateTimeField(null=True, blank=True)
    valid_to = models.DateTimeField(null=True, blank=True)
    # The extraction that proposed this entry (its turn, model and prompt version), if any.
    extraction = models.ForeignKey(
        "episodic.ExtractionRun",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="entries",
    )
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


class ConsolidationProgress(BaseModel):
    """How far a thread's messages have been consolidated into entries, and when it last ran."""

    thread = models.OneToOneField(
        "threads.Thread", on_delete=models.CASCADE, related_name="consolidation"
    )
    # Messages up to this seq have been judged; the next run starts after it.
    consolidated_up_to = models.PositiveBigIntegerField(default=0)
    entries_made = models.PositiveIntegerField(default=0)
    last_run_at = models.DateTimeField(null=True, blank=True)

    def __str__(self):
        return f"{self.thread_id} up to #{self.consolidated_up_to}"


class ExtractionStatus(models.TextChoices):
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"  # the model failed or answered no JSON object: nothing stored


class ExtractionRun(BaseModel):
    """One extraction of a turn (the messages up to an assistant answer): what came of it.

    Rejected proposals are counted here, with the reason, and never stored as entries. One row
    per turn, so a repeated job for the same turn finds it and stores nothing new.
    """

    agent = models.ForeignKey("tenancy.Agent", on_delete=models.CASCADE, related_name="+")
    thread = models.ForeignKey("threads.Thread", on_delete=models.CASCADE, related_name="+")
    first_seq = models.PositiveBigIntegerField()
    last_seq = models.PositiveBigIntegerField()
    status = models.CharField(
        max_length=16, choices=ExtractionStatus.choices, default=ExtractionStatus.RUNNING
    )
    model = models.CharField(max_length=200)
    prompt_version = models.CharField(max_length=40)
    job_id = models.UUIDField(null=True, blank=True)
    proposed = models.PositiveIntegerField(default=0)
    stored = models.PositiveIntegerField(default=0)
    duplicates = models.PositiveIntegerField(default=0)
    rejected = models.PositiveIntegerField(default=0)
    over_cap = models.PositiveIntegerField(default=0)
    # [{"source": label, "reason": why}] for each rejected proposal; no proposed text is kept.
    rejections = models.JSONField(default=list, blank=True)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["thread", "last_seq"], name="extraction_once_per_turn")
        ]

    def __str__(self):
        return f"extraction of {self.thread_id}#{self.first_seq}-{self.last_seq} ({self.status})"
