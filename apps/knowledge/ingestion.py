"""Ingest a document: extract its text, chunk it, and publish the chunks atomically.

Chunks are replaced and the document marked ready in one transaction, so a reader sees either
no chunks of the document or all of them, and a repeated or retried run never duplicates any.
"""

import logging

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q

from apps.jobs.services import PermanentJobError, job_enqueue
from apps.knowledge.chunking import chunk_sections
from apps.knowledge.extract import ExtractionError, extract_sections
from apps.knowledge.models import Chunk, Document, DocumentStatus, SourceKind
from apps.knowledge.url_fetch import page_fetch
from apps.search.indexing import index_chunks, index_set_visible

logger = logging.getLogger(__name__)
JOB_KIND = "knowledge.ingest"
_UNFINISHED = (DocumentStatus.PENDING, DocumentStatus.PROCESSING, DocumentStatus.FAILED)


def document_ingest_enqueue(*, document: Document) -> None:
    job_enqueue(
        kind=JOB_KIND,
        key=str(document.id),
        payload={"document_id": str(document.id)},
        max_attempts=3,
    )


def document_ingest(*, document_id, job=None) -> None:
    """Run the pipeline for one document; a deleted document is skipped."""
    claimed = Document.objects.filter(pk=document_id).exclude(status=DocumentStatus.READY)
    if not claimed.update(status=DocumentStatus.PROCESSING, attempts=F("attempts") + 1, progress=5):
        return  # deleted, or already made ready by an earlier delivery
    document = Document.objects.select_related("knowledge_base", "source").get(pk=document_id)
    index_set_visible(items=Q(chunk__document=document), visible=False)
    try:
        if document.source.kind == SourceKind.URL and not (document.text or document.file):
            page_fetch(document=document)  # a web page is fetched once, then read like a file
        sections = extract_sections(
            path=document.file.path if document.file else None,
            text=None if document.file else document.text,
            mime=document.mime_type,
        )
        _progress(document, 50)
        drafts = chunk_sections(
            sections,
            max_tokens=settings.KNOWLEDGE_CHUNK_TOKENS,
            overlap=settings.KNOWLEDGE_CHUNK_OVERLAP_TOKENS,
        )
        if not drafts:
            raise ExtractionError("No text was found (a scanned PDF needs OCR before upload).")
        _progress(document, 70)
        _publish(document, drafts)
    except ExtractionError as exc:
        _fail(document.pk, str(exc))
        raise PermanentJobError(str(exc)) from None
    except Exception as exc:
        if job is None:  # a job's last failed attempt runs document_ingest_failed instead
            _fail(document.pk, f"Ingestion failed: {exc.__class__.__name__}: {exc}")
        raise


def document_ingest_failed(*, document_id, error: str) -> None:
    """Record that the document's ingestion job gave up; a reason already recorded is kept."""
    _fail(
        document_id,
        f"Ingestion failed: {error}",
        statuses=(DocumentStatus.PENDING, DocumentStatus.PROCESSING),
    )


def _publish(document: Document, drafts) -> None:
    with transaction.atomic():
        locked = Document.objects.select_for_update().filter(pk=document.pk).first()
        if locked is None:
            return  # deleted while it was being read
        Chunk.objects.filter(document=document).delete()
        chunks = Chunk.objects.bulk_create(
            [
                Chunk(
                    document=document,
                    chunk_index=index,
                    content=draft.text,
                    token_count=draft.tokens,
                    metadata=draft.metadata,
                )
                for index, draft in enumerate(drafts)
            ],
            batch_size=500,
        )
        index_chunks(document=document, chunks=chunks, visible=True)
        Document.objects.filter(pk=document.pk).update(
            status=DocumentStatus.READY,
            error="",
            progress=100,
            chunk_count=len(chunks),
            token_count=sum(draft.tokens for draft in drafts),
        )


def _progress(document: Document, percent: int) -> None:
    Document.objects.filter(pk=document.pk).update(progress=percent)


def _fail(document_id, error: str, *, statuses=_UNFINISHED) -> None:
    """Mark the document failed and drop its chunks, search items and vectors."""
    # A failed re-index drops them too: the older version's chunks would otherwise wait hidden
    # forever, counted in chunk_count but found by no search.
    with transaction.atomic():
        locked = Document.objects.select_for_update().filter(pk=document_id, status__in=statuses)
        if locked.values_list("pk", flat=True).first() is None:
            return  # deleted, made ready by another delivery, or its reason already recorded
        Chunk.objects.filter(document_id=document_id).delete()
        locked.update(status=DocumentStatus.FAILED, error=error, chunk_count=0, token_count=0)
    logger.info("document %s failed: %s", document_id, error)
