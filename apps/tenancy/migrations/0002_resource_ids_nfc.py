"""End users' ids in Unicode NFC, as the services now take them (apps/core/text.py).

An id whose NFC form another end user of the project already has is left as it is and
reported: merging two end users' rows is a decision for an operator, not a migration.
"""

import sys
import unicodedata

from django.db import migrations


def _normal(text: str) -> str:
    """NFC after the width mapping (Ａ → A), as apps/core/text.py's name_normalise then."""
    plain = "".join(
        unicodedata.normalize("NFKC", char)
        if unicodedata.decomposition(char).startswith(("<wide>", "<narrow>"))
        else char
        for char in text
    )
    return unicodedata.normalize("NFC", plain)


def forward(apps, schema_editor):
    Resource = apps.get_model("tenancy", "Resource")
    for resource in Resource.objects.order_by("pk").iterator():
        nfc = _normal(resource.external_id)
        if nfc == resource.external_id:
            continue
        twin = Resource.objects.filter(project_id=resource.project_id, external_id=nfc).first()
        if twin is not None:
            sys.stdout.write(
                f"\n  Not normalised: end user {resource.external_id!r} ({resource.pk}) is "
                f"{nfc!r} in NFC, the id of end user {twin.pk} of the same project; forget or "
                "merge one of them, then migrate again.\n"
            )
            continue
        Resource.objects.filter(pk=resource.pk).update(external_id=nfc)


class Migration(migrations.Migration):
    dependencies = [("tenancy", "0001_initial")]

    operations = [migrations.RunPython(forward, migrations.RunPython.noop)]
