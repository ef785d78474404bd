"""End users' ids without surrounding whitespace, as the services now take them
(tenancy.selectors.resource_id_form).

A path or a query parameter kept the spaces a body lost, so " bob " could be stored beside
"bob". An id whose trimmed form another end user of the project already has is left as it is
and reported: merging two end users' rows is a decision for an operator, not a migration.
"""

import sys

from django.db import migrations
from django.db.models import Q


def forward(apps, schema_editor):
    Resource = apps.get_model("tenancy", "Resource")
    spaced = Resource.objects.filter(Q(external_id__regex=r"^\s") | Q(external_id__regex=r"\s$"))
    for resource in spaced.order_by("pk").iterator():
        trimmed = resource.external_id.strip()
        if trimmed == resource.external_id:
            continue
        taken = Resource.objects.filter(project_id=resource.project_id, external_id=trimmed)
        if not trimmed or taken.exists():
            sys.stdout.write(
                f"\n  Not trimmed: end user {resource.external_id!r} ({resource.pk}) would be "
                f"{trimmed!r}, which is blank or the id of another end user of the same "
                "project; forget or merge one of them, then migrate again.\n"
            )
            continue
        Resource.objects.filter(pk=resource.pk).update(external_id=trimmed)


class Migration(migrations.Migration):
    dependencies = [("tenancy", "0003_api_key_scope")]

    operations = [migrations.RunPython(forward, migrations.RunPython.noop)]
