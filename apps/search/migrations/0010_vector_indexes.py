"""PostgreSQL: the HNSW vector index of each common embedding dimension, made here rather than
by the vectors job (building one over a large table holds whoever builds it).

384 (MiniLM, bge-small, e5-small: the bundled local:minilm-onnx), 512, 768 (bge-base, nomic),
1024 (bge-large, mxbai) and 1536 (OpenAI's text-embedding-3-small and ada-002). Each is partial
(WHERE dims = N), so an empty one costs nothing and a vector updates only its own. Another
dimension: `manage.py vector_index N`. Vectors over 2,000 dimensions are always scanned exactly.
SQLite has no vector index.
"""

from django.db import migrations

DIMS = (384, 512, 768, 1024, 1536)


def forward(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for dims in DIMS:  # the statement of backends.postgres.vector_index_statement, as of now
        schema_editor.execute(
            f"CREATE INDEX CONCURRENTLY IF NOT EXISTS search_embedding_hnsw_{dims} "
            f"ON search_itemembedding USING hnsw ((vector::vector({dims})) vector_cosine_ops) "
            f"WHERE dims = {dims}"
        )


class Migration(migrations.Migration):
    # CONCURRENTLY, outside a transaction: on an installation that already holds vectors, the
    # build reads the whole table, and appends and their vectors go on meanwhile.
    atomic = False
    dependencies = [("search", "0009_message_who_when")]

    operations = [migrations.RunPython(forward, migrations.RunPython.noop)]
