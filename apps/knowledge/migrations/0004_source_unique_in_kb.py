# A migration of its own: on PostgreSQL the documents moved by 0003 leave deferred foreign-key
# checks pending, and a table with pending trigger events cannot be altered in that transaction.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("knowledge", "0003_merge_duplicate_sources"),
    ]

    operations = [
        migrations.AddConstraint(
            model_name="source",
            constraint=models.UniqueConstraint(
                fields=("knowledge_base", "kind", "label"), name="source_unique_in_kb"
            ),
        ),
    ]
