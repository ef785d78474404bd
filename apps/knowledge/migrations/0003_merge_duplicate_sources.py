"""Merge sources that share (knowledge base, kind, label) before 0004 makes them unique.

Concurrent first uploads could each create a source; keep the oldest, move the others'
documents onto it and delete them, so adding the constraint cannot fail on existing data.
"""

from django.db import migrations
from django.db.models import Count


def merge_duplicate_sources(apps, schema_editor):
    Source = apps.get_model("knowledge", "Source")
    Document = apps.get_model("knowledge", "Document")
    groups = (
        Source.objects.values("knowledge_base_id", "kind", "label")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
    )
    for group in groups:
        keep, *others = Source.objects.filter(
            knowledge_base_id=group["knowledge_base_id"], kind=group["kind"], label=group["label"]
        ).order_by("created_at", "id")
        metadata = {}
        for other in others:
            metadata.update(other.metadata or {})
        keep.metadata = {**metadata, **(keep.metadata or {})}
        keep.save(update_fields=["metadata"])
        Document.objects.filter(source__in=others).update(source=keep)
        Source.objects.filter(pk__in=[other.pk for other in others]).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("knowledge", "0002_document_progress"),
    ]

    operations = [
        migrations.RunPython(merge_duplicate_sources, migrations.RunPython.noop),
    ]
