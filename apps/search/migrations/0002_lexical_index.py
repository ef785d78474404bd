"""The full-text index of search items: a stored tsvector + GIN on PostgreSQL, FTS5 on SQLite."""

from django.db import migrations

POSTGRES_FORWARD = [
    "ALTER TABLE search_searchitem ADD COLUMN tsv tsvector "
    "GENERATED ALWAYS AS (to_tsvector('english', content)) STORED",
    "CREATE INDEX search_item_tsv ON search_searchitem USING gin (tsv)",
]
POSTGRES_BACKWARD = [
    "DROP INDEX IF EXISTS search_item_tsv",
    "ALTER TABLE search_searchitem DROP COLUMN IF EXISTS tsv",
]
SQLITE_FORWARD = [
    "CREATE VIRTUAL TABLE search_item_fts USING fts5("
    "content, content='search_searchitem', content_rowid='id', tokenize='porter unicode61')",
    "CREATE TRIGGER search_item_fts_insert AFTER INSERT ON search_searchitem BEGIN "
    "INSERT INTO search_item_fts(rowid, content) VALUES (new.id, new.content); END",
    "CREATE TRIGGER search_item_fts_delete AFTER DELETE ON search_searchitem BEGIN "
    "INSERT INTO search_item_fts(search_item_fts, rowid, content) "
    "VALUES ('delete', old.id, old.content); END",
    "CREATE TRIGGER search_item_fts_update AFTER UPDATE OF content ON search_searchitem BEGIN "
    "INSERT INTO search_item_fts(search_item_fts, rowid, content) "
    "VALUES ('delete', old.id, old.content); "
    "INSERT INTO search_item_fts(rowid, content) VALUES (new.id, new.content); END",
]
SQLITE_BACKWARD = [
    "DROP TRIGGER IF EXISTS search_item_fts_update",
    "DROP TRIGGER IF EXISTS search_item_fts_delete",
    "DROP TRIGGER IF EXISTS search_item_fts_insert",
    "DROP TABLE IF EXISTS search_item_fts",
]


def _run(statements_by_vendor):
    def run(apps, schema_editor):
        for statement in statements_by_vendor.get(schema_editor.connection.vendor, []):
            schema_editor.execute(statement)

    return run


class Migration(migrations.Migration):
    dependencies = [("search", "0001_initial")]

    operations = [
        migrations.RunPython(
            _run({"postgresql": POSTGRES_FORWARD, "sqlite": SQLITE_FORWARD}),
            _run({"postgresql": POSTGRES_BACKWARD, "sqlite": SQLITE_BACKWARD}),
        )
    ]
