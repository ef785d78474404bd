from django.db import models

from apps.core.models import BaseModel


class Method(models.TextChoices):
    LLM = "llm"  # the configured model wrote it
    EXTRACTIVE = "extractive"  # rules wrote it: no endpoint, or the model failed
    CONCATENATED = "concatenated"  # a reflection dropped identifiers: its sources, deduplicated


class Observation(BaseModel):
    """Dense notes on the messages first_seq…last_seq of a thread.

    The active set (superseded_by is null) covers seq 1…K with no gap and no overlap. It only
    grows at its end until a reflection replaces it by one row of the next generation; the rows
    it replaced are kept, pointing at it.
    """

    thread = models.ForeignKey(
        "threads.Thread", on_delete=models.CASCADE, related_name="observations"
    )
    generation = models.PositiveIntegerField()
    first_seq = models.PositiveBigIntegerField()
    last_seq = models.PositiveBigIntegerField()
    content = models.TextField()
    tokens = models.PositiveIntegerField()
    # Tokens of the messages first_seq…last_seq: what this row stands in for.
    message_tokens = models.PositiveBigIntegerField(default=0)
    is_reflection = models.BooleanField(default=False)
    superseded_by = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="supersedes"
    )
    method = models.CharField(max_length=16, choices=Method.choices)
    model = models.CharField(max_length=200, blank=True)
    prompt_version = models.CharField(max_length=50)

    class Meta:
        ordering = ["thread", "generation", "first_seq"]
        constraints = [
            # A range is claimed once: a repeated or concurrent job cannot publish it twice.
            models.UniqueConstraint(
                fields=["thread", "generation", "first_seq"],
                name="observation_range_unique_in_generation",
            )
        ]
        indexes = [models.Index(fields=["thread", "superseded_by"], name="observation_active")]

    def __str__(self):
        return f"{self.thread_id} g{self.generation} #{self.first_seq}–{self.last_seq}"


class ObservationProgress(models.Model):
    """How far a thread's observational memory has got; the row publishers claim.

    Observer and Reflector publish with a conditional UPDATE of this row (observed_up_to or
    generation still what they read), so of two jobs racing on one thread exactly one wins.
    """

    thread = models.OneToOneField(
        "threads.Thread", on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    generation = models.PositiveIntegerField(default=1)
    observed_up_to = models.PositiveBigIntegerField(default=0)
    observed_message_tokens = models.PositiveBigIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self):
        return f"{self.thread_id} g{self.generation} up to #{self.observed_up_to}"


class ThreadSummary(BaseModel):
    """A rolling summary of messages 1…covers_up_to_seq of a thread; a new version replaces it."""

    thread = models.ForeignKey("threads.Thread", on_delete=models.CASCADE, related_name="summaries")
    version = models.PositiveIntegerField()
    content = models.TextField()
    tokens = models.PositiveIntegerField()
    covers_up_to_seq = models.PositiveBigIntegerField()
    # Tokens of the messages 1…covers_up_to_seq, so the thread's estimate needs no sum.
    message_tokens = models.PositiveBigIntegerField(default=0)
    method = models.CharField(max_length=16, choices=Method.choices)
    model = models.CharField(max_length=200, blank=True)
    prompt_version = models.CharField(max_length=50)

    class Meta:
        ordering = ["thread", "-version"]
        constraints = [
            models.UniqueConstraint(
                fields=["thread", "version"], name="thread_summary_version_unique"
            )
        ]

    def __str__(self):
        return f"{self.thread_id} v{self.version} (to #{self.covers_up_to_seq})"


class Stage(models.TextChoices):
    OBSERVER = "observer"
    REFLECTOR = "reflector"
    COMPACTION = "compaction"
    CONSOLIDATION = "consolidation"  # reported by episodic (apps.providers.failures)
    EXTRACTION = "extraction"


class ObservationFailure(BaseModel):
    """A model answer that was not used: what was asked, what went wrong, what was kept instead."""

    thread = models.ForeignKey(
        "threads.Thread", on_delete=models.CASCADE, related_name="observation_failures"
    )
    stage = models.CharField(max_length=16, choices=Stage.choices)
    generation = models.PositiveIntegerField()
    first_seq = models.PositiveBigIntegerField()
    last_seq = models.PositiveBigIntegerField()
    model = models.CharField(max_length=200, blank=True)
    prompt_version = models.CharField(max_length=50)
    error = models.TextField()
    outcome = models.CharField(max_length=200)

    class Meta:
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["thread", "stage", "generation"], name="obs_failure_lookup")
        ]

    def __str__(self):
        return f"{self.stage} of {self.thread_id} #{self.first_seq}–{self.last_seq}: {self.error}"
