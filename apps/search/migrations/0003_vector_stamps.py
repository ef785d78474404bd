"""SQLite: a change counter per (project, kind) of item vectors, kept by triggers.

Search on SQLite keeps each scope's vectors in memory and must know when they changed. Counting
the scope's rows for that read every vector of the scope; a counter bumped by triggers on every
insert, delete and update of search_itemembedding answers in one row and cannot be bypassed by
any code path (Django's cascades delete row by row, so they fire the triggers too).
"""

from django.db import migrations

_BUMP = (
    "INSERT INTO search_vector_stamp(project_id, kind, version) VALUES ({row}.project_id, "
    "{row}.kind, 1) ON CONFLICT(project_id, kind) DO UPDATE SET version = version + 1;"
)
SQLITE_FORWARD = [
    "CREATE TABLE search_vector_stamp (project_id char(32) NOT NULL, kind varchar(16) NOT NULL, "
    "version integer NOT NULL, PRIMARY KEY (project_id, kind))",
    "CREATE TRIGGER search_vector_stamp_insert AFTER INSERT ON search_itemembedding BEGIN "
    + _BUMP.format(row="new")
    + " END",
    "CREATE TRIGGER search_vector_stamp_delete AFTER DELETE ON search_itemembedding BEGIN "
    + _BUMP.format(row="old")
    + " END",
    "CREATE TRIGGER search_vector_stamp_update AFTER UPDATE ON search_itemembedding BEGIN "
    + _BUMP.format(row="old")
    + " "
    + _BUMP.format(row="new")
    + " END",
]
SQLITE_BACKWARD = [
    "DROP TRIGGER IF EXISTS search_vector_stamp_update",
    "DROP TRIGGER IF EXISTS search_vector_stamp_delete",
    "DROP TRIGGER IF EXISTS search_vector_stamp_insert",
    "DROP TABLE IF EXISTS search_vector_stamp",
]


def _run(statements):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor == "sqlite":
            for statement in statements:
                schema_editor.execute(statement)

    return run


class Migration(migrations.Migration):
    dependencies = [("search", "0002_lexical_index")]

    operations = [migrations.RunPython(_run(SQLITE_FORWARD), _run(SQLITE_BACKWARD))]
