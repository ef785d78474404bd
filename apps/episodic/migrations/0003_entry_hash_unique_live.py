# A migration of its own, after the data change of 0002, so PostgreSQL alters the table in a
# transaction with no pending trigger events.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("episodic", "0002_supersede_duplicate_entries"),
        ("tenancy", "0001_initial"),
        ("threads", "0001_initial"),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="memoryentry",
            name="entry_hash_unique_in_scope",
        ),
        migrations.AddConstraint(
            model_name="memoryentry",
            constraint=models.UniqueConstraint(
                condition=models.Q(
                    ("resource__isnull", False), ("status__in", ["pending", "approved"])
                ),
                fields=("agent", "resource", "content_hash"),
                name="entry_hash_unique_live_in_resource",
            ),
        ),
        migrations.AddConstraint(
            model_name="memoryentry",
            constraint=models.UniqueConstraint(
                condition=models.Q(
                    ("resource__isnull", True), ("status__in", ["pending", "approved"])
                ),
                fields=("agent", "content_hash"),
                name="entry_hash_unique_live_without_resource",
            ),
        ),
    ]
