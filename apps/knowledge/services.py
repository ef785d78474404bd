"""Writes of knowledge bases and their documents."""

import hashlib
from dataclasses import dataclass
from pathlib import PurePosixPath

from django.core.files.storage import default_storage
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from apps.audit.services import audit_record
from apps.core.database import delete_or_not_found
from apps.core.errors import ApplicationError, Conflict, UnsupportedMediaType
from apps.core.ids import uuid7
from apps.core.outbound import OutboundRefused, url_check
from apps.knowledge.ingestion import document_ingest_enqueue
from apps.knowledge.models import (
    Chunk,
    Document,
    DocumentStatus,
    KnowledgeBase,
    Source,
    SourceKind,
)
from apps.knowledge.selectors import knowledge_base_slug_clean
from apps.knowledge.sniff import MARKDOWN, UnsupportedContent, sniff_mime
from apps.providers.tokens import count_tokens
from apps.search.indexing import index_chunks, index_set_visible
from apps.tenancy.models import Project


@dataclass(frozen=True)
class UpsertResult:
    document: Document
    chunk: Chunk
    created: bool
    namespace: str  # the knowledge base's slug, as stored (case-folded, NFC)


def knowledge_base_get_or_create(
    *, project: Project, slug: str, actor: str, name: str = ""
) -> KnowledgeBase:
    """Return the project's knowledge base with this slug, creating it (audited); safe under races.

    get_or_create inserts inside its own savepoint and reads again after an IntegrityError, so a
    concurrent creator (another upsert, or POST knowledge-bases) yields the row it committed.
    """
    slug = knowledge_base_slug_clean(slug)
    kb, created = KnowledgeBase.objects.get_or_create(
        project=project, slug=slug, defaults={"name": name or slug}
    )
    if created:
        _audit_kb(kb, actor, "knowledge_base.create", before=None, after=_kb_fields(kb))
    return kb


def _source_get_or_create(*, kb: KnowledgeBase, kind: str, label: str) -> Source:
    """Return the knowledge base's source of this kind and label, creating it once.

    The unique (knowledge base, kind, label) constraint makes a concurrent first use insert one
    row: without it two first uploads each created a source, and every later get_or_create
    failed with MultipleObjectsReturned.
    """
    source, _ = Source.objects.get_or_create(knowledge_base=kb, kind=kind, label=label)
    return source


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def memory_upsert(
    *, project: Project, namespace: str, content: str, metadata: dict, actor: str
) -> UpsertResult:
    """Store one fact as a single-chunk document of the namespace's knowledge base.

    The namespace's knowledge base is created on first use; the same content is stored once.
    """
    kb = knowledge_base_get_or_create(project=project, slug=namespace, actor=actor)
    digest = text_hash(content)
    existing = Document.objects.filter(knowledge_base=kb, content_hash=digest).first()
    if existing is not None:
        return _upserted_before(existing, kb.slug)
    try:
        with transaction.atomic():
            source = _source_get_or_create(kb=kb, kind=SourceKind.API, label="memory upsert")
            document = Document.objects.create(
                knowledge_base=kb,
                source=source,
                title=content[:80],
                content_hash=digest,
                mime_type="text/plain",
                size_bytes=len(content.encode()),
                text=content,
                status=DocumentStatus.READY,
                chunk_count=1,
                token_count=count_tokens(content),
                metadata=metadata,
                uploaded_by=actor,
            )
            chunk = Chunk.objects.create(
                document=document,
                chunk_index=0,
                content=content,
                token_count=document.token_count,
                metadata=metadata,
                created_at=timezone.now(),
            )
            index_chunks(document=document, chunks=[chunk], visible=True)
            _audit_document(document, actor, "document.create", source="memory upsert")
    except IntegrityError:
        document = Document.objects.get(knowledge_base=kb, content_hash=digest)
        return _upserted_before(document, kb.slug)
    return UpsertResult(document, chunk, created=True, namespace=kb.slug)


def _upserted_before(document: Document, namespace: str) -> UpsertResult:
    """Answer with the stored fact; the same text uploaded as a document may not be read yet."""
    chunk = document.chunks.filter(chunk_index=0).first()
    if chunk is None:
        raise Conflict(
            f"content: the same text is document {document.pk} of namespace {namespace!r}, "
            f"which is {document.status} and has no chunk yet; retry once it is ready."
        )
    return UpsertResult(document, chunk, created=False, namespace=namespace)


@dataclass(frozen=True)
class DocumentResult:
    document: Document
    created: bool  # False: the same content was in the knowledge base already


def knowledge_base_create(
    *, project: Project, slug: str, name: str = "", description: str = "", actor: str = "system"
) -> KnowledgeBase:
    """Create a knowledge base; a slug already taken, even a moment ago by a racing request, is 409.

    The unique constraint decides, not a prior read: two concurrent creates (or a create racing a
    memory upsert into the same namespace) both pass a read, and the loser's insert fails.
    """
    slug = knowledge_base_slug_clean(slug)
    try:
        with transaction.atomic():
            kb = KnowledgeBase.objects.create(
                project=project, slug=slug, name=name or slug, description=description
            )
            _audit_kb(kb, actor, "knowledge_base.create", before=None, after=_kb_fields(kb))
            return kb
    except IntegrityError:
        raise Conflict(
            f"A knowledge base {slug!r} exists in this project.", code="duplicate"
        ) from None


def knowledge_base_delete(*, kb: KnowledgeBase, actor: str) -> dict:
    """Delete a knowledge base with its documents, stored files, chunks and vectors.

    Returns the counts that went ({"documents": n, "chunks": m}); the audit event keeps them.
    """
    with transaction.atomic():
        documents = Document.objects.filter(knowledge_base=kb)
        counts = {
            "documents": documents.count(),
            "chunks": Chunk.objects.filter(document__knowledge_base=kb).count(),
        }
        stored = [name for name in documents.values_list("file", flat=True) if name]
        before = {**_kb_fields(kb), **counts}
        _audit_kb(kb, actor, "knowledge_base.delete", before=before, after=None)
        kb.delete()
        for name in stored:
            transaction.on_commit(lambda name=name: default_storage.delete(name))
    return counts


def _kb_fields(kb: KnowledgeBase) -> dict:
    return {"slug": kb.slug, "name": kb.name, "description": kb.description}


def _audit_kb(kb: KnowledgeBase, actor: str, action: str, *, before, after) -> None:
    audit_record(
        actor=actor,
        action=action,
        object_type="knowledge_base",
        object_id=kb.id,
        project_id=kb.project_id,
        summary=kb.slug,
        before=before,
        after=after,
    )


def _audit_document(document: Document, actor: str, action: str, **fields) -> None:
    audit_record(
        actor=actor,
        action=action,
        object_type="document",
        object_id=document.id,
        project_id=document.knowledge_base.project_id,
        summary=document.title,
        after={
            "knowledge_base": document.knowledge_base.slug,
            "title": document.title,
            "size_bytes": document.size_bytes,
            **fields,
        },
    )


def document_upload(*, kb: KnowledgeBase, upload, title: str = "", actor: str) -> DocumentResult:
    """Store an uploaded file as a pending document and queue its ingestion.

    1. Refuse a name with path parts, an empty file, and content that is no supported document.
    2. Hash the bytes; content the knowledge base has already is reported, not stored again.
    3. Save the file under a generated name, create the document, queue ingestion after commit.
    """
    name = upload.name or ""
    if "/" in name or "\\" in name or name in {"", ".", ".."}:
        raise ApplicationError("file: the file name must be a plain name without folders.")
    if upload.size == 0:
        raise ApplicationError("file: the file is empty.")
    digest, head = _hash_and_head(upload)
    try:
        mime = sniff_mime(head, name)
    except UnsupportedContent as exc:
        raise UnsupportedMediaType(f"file: {exc}") from None
    existing = Document.objects.filter(knowledge_base=kb, content_hash=digest).first()
    if existing is not None:
        return DocumentResult(existing, created=False)
    suffix = PurePosixPath(name).suffix.lower()[:10]
    with transaction.atomic():
        source = _source_get_or_create(kb=kb, kind=SourceKind.UPLOAD, label="uploads")
        document = Document(
            knowledge_base=kb,
            source=source,
            title=(title or name)[:300],
            content_hash=digest,
            mime_type=mime,
            size_bytes=upload.size,
            metadata={"filename": name},
            uploaded_by=actor,
        )
        upload.seek(0)
        document.file.save(f"{uuid7().hex}{suffix}", upload, save=False)
        try:
            with transaction.atomic():
                document.save()
        except IntegrityError:
            document.file.delete(save=False)
            return DocumentResult(
                Document.objects.get(knowledge_base=kb, content_hash=digest), created=False
            )
        _audit_document(document, actor, "document.upload", filename=name, mime_type=mime)
        document_ingest_enqueue(document=document)
    return DocumentResult(document, created=True)


def document_from_text(*, kb: KnowledgeBase, title: str, text: str, actor: str) -> DocumentResult:
    """Store pasted text as a pending document (Markdown structure is kept) and queue it."""
    if not text.strip():
        raise ApplicationError("text: must not be blank.")
    digest = text_hash(text)
    existing = Document.objects.filter(knowledge_base=kb, content_hash=digest).first()
    if existing is not None:
        return DocumentResult(existing, created=False)
    try:
        with transaction.atomic():
            source = _source_get_or_create(kb=kb, kind=SourceKind.TEXT, label="text")
            document = Document.objects.create(
                knowledge_base=kb,
                source=source,
                title=title[:300],
                content_hash=digest,
                mime_type=MARKDOWN,
                size_bytes=len(text.encode()),
                text=text,
                uploaded_by=actor,
            )
            _audit_document(document, actor, "document.create", source="text")
            document_ingest_enqueue(document=document)
    except IntegrityError:
        return DocumentResult(
            Document.objects.get(knowledge_base=kb, content_hash=digest), created=False
        )
    return DocumentResult(document, created=True)


def document_from_url(
    *, kb: KnowledgeBase, url: str, title: str = "", actor: str
) -> DocumentResult:
    """Store a web page's address as a pending document; the worker fetches and reads it.

    1. Check the address now (http or https, a resolvable host, no private, loopback or
       link-local address unless allowed), so a refused one is a 400 rather than a failed
       document; the worker checks it again, and every redirect, before it connects.
    2. An address the knowledge base already holds answers that document.
    3. Until the page is fetched its content hash is a hash of the address, which the unique
       constraint uses to store one document when the same address is sent twice at once;
       the fetch replaces it with the hash of the page's content.
    """
    url = url.strip()
    try:
        url_check(url)
    except OutboundRefused as exc:
        raise ApplicationError(f"url: {exc}") from None
    existing = Document.objects.filter(
        knowledge_base=kb, source__kind=SourceKind.URL, metadata__url=url
    ).first()
    if existing is not None:
        return DocumentResult(existing, created=False)
    digest = text_hash(f"url:{url}")
    try:
        with transaction.atomic():
            source = _source_get_or_create(kb=kb, kind=SourceKind.URL, label=url[:300])
            document = Document.objects.create(
                knowledge_base=kb,
                source=source,
                title=(title or url)[:300],
                content_hash=digest,
                metadata={"url": url},
                uploaded_by=actor,
            )
            _audit_document(document, actor, "document.create", source="url", url=url)
            document_ingest_enqueue(document=document)
    except IntegrityError:
        return DocumentResult(
            Document.objects.get(knowledge_base=kb, content_hash=digest), created=False
        )
    return DocumentResult(document, created=True)


def document_reindex(*, document: Document, actor: str = "system") -> Document:
    """Extract and chunk the document again; its chunks are hidden until it is ready again."""
    with transaction.atomic():
        _audit_document(document, actor, "document.reindex", chunks_before=document.chunk_count)
        Document.objects.filter(pk=document.pk).update(
            status=DocumentStatus.PENDING,
            progress=0,
            error="",
            attempts=0,
            updated_at=timezone.now(),  # update() leaves auto_now alone
        )
        index_set_visible(items=Q(chunk__document=document), visible=False)
        document_ingest_enqueue(document=document)
    document.refresh_from_db()
    return document


def document_delete(*, document: Document, actor: str) -> None:
    """Delete the document with its stored file, chunks and vectors."""
    stored = document.file.name if document.file else ""
    with transaction.atomic():
        audit_record(
            actor=actor,
            action="document.delete",
            object_type="document",
            object_id=document.id,
            project_id=document.knowledge_base.project_id,
            summary=document.title,
            before={"title": document.title, "chunks": document.chunk_count},
        )
        delete_or_not_found(document, "document")
    if stored:
        transaction.on_commit(lambda: default_storage.delete(stored))


def _hash_and_head(upload) -> tuple[str, bytes]:
    digest = hashlib.sha256()
    head = b""
    for piece in upload.chunks():
        if len(head) < 4096:
            head += piece[: 4096 - len(head)]
        digest.update(piece)
    return digest.hexdigest(), head
