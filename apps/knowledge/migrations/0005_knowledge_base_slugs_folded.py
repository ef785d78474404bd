"""Knowledge base slugs in NFC and case-folded, as the services now take them (kb-a and KB-A
are one base).

A slug whose folded form another base of the project already has is left as it is and
reported: merging two bases' documents is a decision for a curator, not a migration.
"""

import sys
import unicodedata

from django.db import migrations


def forward(apps, schema_editor):
    KnowledgeBase = apps.get_model("knowledge", "KnowledgeBase")
    for kb in KnowledgeBase.objects.order_by("pk").iterator():
        folded = unicodedata.normalize("NFC", kb.slug).casefold()
        if folded == kb.slug:
            continue
        twin = KnowledgeBase.objects.filter(project_id=kb.project_id, slug=folded).first()
        if twin is not None:
            sys.stdout.write(
                f"\n  Not folded: knowledge base {kb.slug!r} ({kb.pk}) is {folded!r} folded, "
                f"the slug of knowledge base {twin.pk} of the same project; move its documents "
                "and delete one of them, then migrate again.\n"
            )
            continue
        KnowledgeBase.objects.filter(pk=kb.pk).update(slug=folded)


class Migration(migrations.Migration):
    dependencies = [("knowledge", "0004_source_unique_in_kb")]

    operations = [migrations.RunPython(forward, migrations.RunPython.noop)]
