"""Messages indexed before their actor and date were part of their text get them now.

Each message item's text is made again from its message, as insert_message_items makes it
(item_text.py). The full-text indexes follow: PostgreSQL's generated tsvector column, SQLite's
FTS5 table by its update trigger (migration 0002). SQLite's FTS5 table already stems (its
tokenizer is 'porter unicode61' since 0002), so nothing else needs rebuilding. Vectors are kept:
they are made from the text without the who/when line (item_text.said_text).
"""

from django.db import migrations

from apps.search.indexing import PAYLOAD_TEXT_CHARS
from apps.search.item_text import message_text_sql


def forward(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    text = message_text_sql(vendor, PAYLOAD_TEXT_CHARS)
    if vendor == "postgresql":
        schema_editor.execute(
            f"UPDATE search_searchitem si SET content = {text} FROM threads_message m "
            "WHERE si.kind = 'message' AND m.id = si.message_id"
        )
    else:
        schema_editor.execute(
            f"UPDATE search_searchitem SET content = (SELECT {text} FROM threads_message m "
            "WHERE m.id = search_searchitem.message_id) "
            "WHERE kind = 'message' AND message_id IS NOT NULL"
        )


def backward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        said, found = "rtrim(split_part(content, E'\\x1f', 1), E'\\n')", "strpos(content, E'\\x1f')"
    else:
        said = "rtrim(substr(content, 1, instr(content, char(31)) - 1), char(10))"
        found = "instr(content, char(31))"
    schema_editor.execute(
        f"UPDATE search_searchitem SET content = {said} WHERE kind = 'message' AND {found} > 0"
    )


class Migration(migrations.Migration):
    dependencies = [("search", "0008_artifact_items")]

    operations = [migrations.RunPython(forward, backward)]
