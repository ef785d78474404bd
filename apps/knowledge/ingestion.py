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
from apps.knowledge.models import Chunk, Document, DocumentStatus
from apps.search.indexing import index_chunks, index_set_visible

logger = logging.getLogger(__name__)
JOB_KIND = "knowledge.ingest"


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
    document = Document.objects.select_related("knowledge_base").get(pk=document_id)
    index_set_visible(items=Q(chunk__document=document), visible=False)
    try:
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
        _fail(document, str(exc))
        raise PermanentJobError(str(exc)) from None
    except Exception as exc:
        if job is None or job.attempts >= job.max_attempts:
            _fail(document, f"Ingestion failed: {exc.__class__.__name__}: {exc}")
        raise


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


def _fail(document: Document, error: str) -> None:
    logger.info("document %s failed: %s", document.id, error)
    Document.objects.filter(pk=document.pk).update(status=DocumentStatus.FAILED, error=error)
