"""PostgreSQL: tell the planner that a search item's scope columns depend on each other.

project_id, kind, knowledge_base_id, agent_id and thread_id are strongly correlated (a
knowledge base belongs to one project; a thread to one agent), but the planner multiplies
their selectivities as if independent, so a scope of 100,000 chunks was estimated at a few
rows and every full-text match was fetched and sorted instead of stopping at the newest ones.
"""

from django.db import migrations


def _run(statement):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(statement)

    return run


class Migration(migrations.Migration):
    dependencies = [("search", "0003_vector_stamps")]

    operations = [
        migrations.RunPython(
            _run(
                "CREATE STATISTICS IF NOT EXISTS search_item_scope (dependencies, ndistinct) "
                "ON project_id, kind, knowledge_base_id, agent_id, thread_id "
                "FROM search_searchitem"
            ),
            _run("DROP STATISTICS IF EXISTS search_item_scope"),
        )
    ]
