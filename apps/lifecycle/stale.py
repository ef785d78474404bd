"""A memory entry whose source thread is deleted is marked stale, with the reason.

Deleting a thread keeps what the agent learned from it (forgetting the end user deletes that
too, services.py), but the entry's thread and message links become empty: the entry says why in
metadata["stale"], so that nobody takes the empty link for an entry that never had a source.
"""

from django.db.models.signals import pre_delete
from django.dispatch import receiver
from django.utils import timezone

from apps.episodic.models import MemoryEntry
from apps.threads.models import Thread


@receiver(pre_delete, sender=Thread)
def _mark_entries_of_deleted_thread(sender, instance, **kwargs):
    now = timezone.now().isoformat()
    for entry in MemoryEntry.objects.filter(thread=instance).only("pk", "metadata", "message"):
        entry.metadata = {
            **(entry.metadata or {}),
            "stale": {
                "reason": f"source thread {instance.pk} was deleted",
                "message_id": str(entry.message_id) if entry.message_id else None,
                "at": now,
            },
        }
        entry.save(update_fields=["metadata"])
