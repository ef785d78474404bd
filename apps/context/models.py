from django.db import models

from apps.core.models import BaseModel


class ContextSnapshot(BaseModel):
    """What one context call gave an agent: every item's identity and hash, not its text.

    The manifest is enough to re-render the context from the stored rows and to say which items
    changed or went since (see apps/context/snapshots.py).
    """

    # No index of its own: context_snapshot_thread (thread, -id) leads with it, and serves the
    # thread's list and its cascade alike; one index less to write on every context.
    thread = models.ForeignKey(
        "threads.Thread", on_delete=models.CASCADE, related_name="+", db_index=False
    )
    agent = models.ForeignKey("tenancy.Agent", on_delete=models.CASCADE, related_name="+")
    query = models.TextField(blank=True)
    max_tokens = models.PositiveIntegerField()
    tokens = models.PositiveIntegerField()
    config_version = models.CharField(max_length=32)
    # The moment the context was rendered for (relative ages are counted from it).
    assembled_at = models.DateTimeField()
    # {"blocks": [{"name", "type", "id": [...], "seq": [...], "score": [...], "hash": [...]}],
    #  "warnings": [...]}: each block's items column by column (snapshots.manifest_block; older
    # snapshots list them as "items": [{"type", "id", "seq", "score", "hash"}]).
    manifest = models.JSONField()

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["thread", "-id"], name="context_snapshot_thread")]

    def __str__(self):
        return f"context {self.id} of thread {self.thread_id}"
