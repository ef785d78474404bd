from django.db import models

from apps.core.models import BaseModel


class KnowledgeBase(BaseModel):
    """A project's collection of reference documents that every agent of the project can search."""

    project = models.ForeignKey(
        "tenancy.Project", on_delete=models.CASCADE, related_name="knowledge_bases"
    )
    slug = models.SlugField(max_length=64)
    name = models.CharField(max_length=200, blank=True)
    description = models.TextField(blank=True)

    class Meta:
        ordering = ["slug"]
        constraints = [
            models.UniqueConstraint(fields=["project", "slug"], name="kb_slug_unique_in_project")
        ]

    def __str__(self):
        return self.slug


class SourceKind(models.TextChoices):
    UPLOAD = "upload"
    TEXT = "text"
    URL = "url"
    API = "api"
    CHAT_EXTRACTION = "chat_extraction"


class Source(BaseModel):
    """Where documents come from: uploads, pasted text, the API, facts extracted from chats."""

    knowledge_base = models.ForeignKey(
        KnowledgeBase, on_delete=models.CASCADE, related_name="sources"
    )
    kind = models.CharField(max_length=32, choices=SourceKind.choices)
    label = models.CharField(max_length=300, blank=True)
    metadata = models.JSONField(default=dict, blank=True)

    class Meta:
        constraints = [
            # Services get-or-create a source by these three; concurrent first uses insert once.
            models.UniqueConstraint(
                fields=["knowledge_base", "kind", "label"], name="source_unique_in_kb"
            )
        ]

    def __str__(self):
        return f"{self.kind}: {self.label}"


class DocumentStatus(models.TextChoices):
    PENDING = "pending"
    PROCESSING = "processing"
    READY = "ready"
    FAILED = "failed"


class Document(BaseModel):
    """A parent unit of a knowledge base, stored once per content hash."""

    knowledge_base = models.ForeignKey(
        KnowledgeBase, on_delete=models.CASCADE, related_name="documents"
    )
    source = models.ForeignKey(Source, on_delete=models.CASCADE, related_name="documents")
    title = models.CharField(max_length=300)
    content_hash = models.CharField(max_length=64)
    mime_type = models.CharField(max_length=100, blank=True)
    size_bytes = models.PositiveBigIntegerField(default=0)
    file = models.FileField(upload_to="documents/%Y/%m/", blank=True)
    text = models.TextField(blank=True, help_text="The text of a document sent as text.")
    status = models.CharField(
        max_length=16, choices=DocumentStatus.choices, default=DocumentStatus.PENDING
    )
    error = models.TextField(blank=True)
    attempts = models.PositiveIntegerField(default=0)
    progress = models.PositiveSmallIntegerField(default=0, help_text="Percent of ingestion done.")
    chunk_count = models.PositiveIntegerField(default=0)
    token_count = models.PositiveBigIntegerField(default=0)
    metadata = models.JSONField(default=dict, blank=True)
    uploaded_by = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["knowledge_base", "content_hash"], name="document_hash_unique_in_kb"
            )
        ]

    def __str__(self):
        return self.title


class Chunk(models.Model):
    """A searchable fragment of a document, in document order."""

    id = models.BigAutoField(primary_key=True)
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="chunks")
    chunk_index = models.PositiveIntegerField()
    content = models.TextField()
    token_count = models.PositiveIntegerField(default=0)
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["document", "chunk_index"]
        constraints = [
            models.UniqueConstraint(fields=["document", "chunk_index"], name="chunk_index_unique")
        ]

    def __str__(self):
        return f"{self.document_id}#{self.chunk_index}"
