"""Migrations 0003-0004: duplicate sources left by earlier races are merged first."""

from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from apps.knowledge.models import Document, Source

BEFORE = [("knowledge", "0002_document_progress")]
AFTER = [("knowledge", "0004_source_unique_in_kb")]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def test_it_merges_duplicate_sources_into_the_oldest_and_keeps_their_documents(transactional_db):
    old = _migrate(BEFORE)
    project = old.get_model("tenancy", "Project").objects.create(slug="acme", name="acme")
    kb = old.get_model("knowledge", "KnowledgeBase").objects.create(project=project, slug="ops")
    source_model = old.get_model("knowledge", "Source")
    first = source_model.objects.create(knowledge_base=kb, kind="text", label="text")
    second = source_model.objects.create(
        knowledge_base=kb, kind="text", label="text", metadata={"origin": "race"}
    )
    other = source_model.objects.create(knowledge_base=kb, kind="upload", label="uploads")
    document_model = old.get_model("knowledge", "Document")
    for n, source in enumerate([first, second, second, other]):
        document_model.objects.create(
            knowledge_base=kb, source=source, title=f"d{n}", content_hash=f"h{n}"
        )

    _migrate(AFTER)

    assert sorted(Source.objects.values_list("kind", flat=True)) == ["text", "upload"]
    kept = Source.objects.get(kind="text")
    assert kept.pk == first.pk
    assert kept.metadata == {"origin": "race"}
    assert Document.objects.filter(source=kept).count() == 3
    assert Document.objects.filter(source_id=other.pk).count() == 1
