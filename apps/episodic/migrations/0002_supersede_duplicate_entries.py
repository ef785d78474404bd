"""Mark live entries that repeat an older live entry of their scope superseded, before 0003.

0003 lets the database hold one live (pending or approved) entry per content hash, agent and
resource; entries without a resource could be stored twice by concurrent proposals until then.
The oldest live entry of each group is kept; the others become superseded, name the entry they
repeat in metadata, and leave search, so the constraint cannot fail on existing data.
"""

from django.db import migrations
from django.db.models import Count
from django.utils import timezone

LIVE = ["pending", "approved"]


def supersede_duplicate_entries(apps, schema_editor):
    MemoryEntry = apps.get_model("episodic", "MemoryEntry")
    live = MemoryEntry.objects.filter(status__in=LIVE)
    groups = (
        live.values("agent_id", "resource_id", "content_hash")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
    )
    now = timezone.now()
    superseded = []
    for group in groups:
        keep, *others = live.filter(
            agent_id=group["agent_id"],
            resource_id=group["resource_id"],  # None reads as IS NULL
            content_hash=group["content_hash"],
        ).order_by("created_at", "id")
        for entry in others:
            entry.status = "superseded"
            entry.status_changed_by = "migration: duplicate by hash"
            entry.status_changed_at = now
            entry.metadata = {**(entry.metadata or {}), "duplicate_of": str(keep.pk)}
            entry.save(
                update_fields=["status", "status_changed_by", "status_changed_at", "metadata"]
            )
            superseded.append(entry.pk)
    if superseded:
        _hide_from_search(apps, superseded)


def _hide_from_search(apps, entry_ids):
    """Hide the superseded entries' search items and vectors, as moderation would."""
    SearchItem = apps.get_model("search", "SearchItem")
    ItemEmbedding = apps.get_model("search", "ItemEmbedding")
    fields = {f.name for f in SearchItem._meta.get_fields()}
    if not {"entry", "visible"} <= fields:  # the search schema moved on; nothing to hide here
        return
    item_ids = list(
        SearchItem.objects.filter(entry_id__in=entry_ids).values_list("id", flat=True)
    )
    SearchItem.objects.filter(id__in=item_ids).update(visible=False)
    if "visible" in {f.name for f in ItemEmbedding._meta.get_fields()}:
        ItemEmbedding.objects.filter(item_id__in=item_ids).update(visible=False)


class Migration(migrations.Migration):
    dependencies = [
        ("episodic", "0001_initial"),
        ("search", "0001_initial"),
    ]

    operations = [
        migrations.RunPython(supersede_duplicate_entries, migrations.RunPython.noop),
    ]
