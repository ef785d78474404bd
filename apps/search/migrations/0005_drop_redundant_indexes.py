"""Drop the single-column indexes Django made for four foreign keys of SearchItem.

Each column leads one of the composite indexes in SearchItem.Meta, which serve the same lookups,
so the single-column ones only cost a write per row and give the planner worse choices. The
indexes are dropped with plain SQL: altering the fields would make SQLite rebuild the table,
which drops the full-text triggers of migration 0002.
"""

import django.db.models.deletion
from django.db import migrations, models

TABLE = "search_searchitem"
INDEXES = {
    "agent_id": "search_searchitem_agent_id_689796df",
    "knowledge_base_id": "search_searchitem_knowledge_base_id_80db6700",
    "project_id": "search_searchitem_project_id_203b4b83",
    "thread_id": "search_searchitem_thread_id_d7e934cf",
}


def foreign_key(to: str, *, null: bool = True):
    return models.ForeignKey(
        db_index=False,
        null=null,
        on_delete=django.db.models.deletion.CASCADE,
        related_name="+",
        to=to,
    )


class Migration(migrations.Migration):
    dependencies = [
        ("knowledge", "0002_document_progress"),
        ("search", "0004_scope_statistics"),
        ("tenancy", "0001_initial"),
        ("threads", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(
                    f"DROP INDEX IF EXISTS {name}",
                    reverse_sql=f"CREATE INDEX {name} ON {TABLE} ({column})",
                )
                for column, name in INDEXES.items()
            ],
            state_operations=[
                migrations.AlterField(
                    model_name="searchitem", name="agent", field=foreign_key("tenancy.agent")
                ),
                migrations.AlterField(
                    model_name="searchitem",
                    name="knowledge_base",
                    field=foreign_key("knowledge.knowledgebase"),
                ),
                migrations.AlterField(
                    model_name="searchitem",
                    name="project",
                    field=foreign_key("tenancy.project", null=False),
                ),
                migrations.AlterField(
                    model_name="searchitem", name="thread", field=foreign_key("threads.thread")
                ),
            ],
        ),
    ]
