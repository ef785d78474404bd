from django.contrib import admin

from apps.knowledge.models import Chunk, Document, KnowledgeBase, Source


@admin.register(KnowledgeBase)
class KnowledgeBaseAdmin(admin.ModelAdmin):
    list_display = ["slug", "project", "name", "created_at"]
    list_filter = ["project"]
    search_fields = ["slug", "name"]
    readonly_fields = ["id", "created_at", "updated_at"]


@admin.register(Source)
class SourceAdmin(admin.ModelAdmin):
    list_display = ["__str__", "knowledge_base", "kind", "created_at"]
    list_filter = ["kind"]
    search_fields = ["label"]
    raw_id_fields = ["knowledge_base"]
    readonly_fields = ["id", "created_at", "updated_at"]


@admin.register(Document)
class DocumentAdmin(admin.ModelAdmin):
    list_display = ["title", "knowledge_base", "status", "progress", "chunk_count", "created_at"]
    list_filter = ["status", "mime_type"]
    list_select_related = ["knowledge_base"]
    search_fields = ["title", "content_hash"]
    raw_id_fields = ["knowledge_base", "source"]
    # Ingestion owns these: the content is chunked and indexed, the rest reports its progress.
    readonly_fields = [
        "id",
        "content_hash",
        "mime_type",
        "size_bytes",
        "file",
        "text",
        "status",
        "error",
        "attempts",
        "progress",
        "chunk_count",
        "token_count",
        "created_at",
        "updated_at",
    ]

    def has_add_permission(self, request):
        return False  # uploads go through the console or the API, which start ingestion


@admin.register(Chunk)
class ChunkAdmin(admin.ModelAdmin):
    list_display = ["__str__", "document", "chunk_index", "token_count", "created_at"]
    search_fields = ["content"]
    # Chunks mirror the search index; re-index the document to change them.
    readonly_fields = ["document", "chunk_index", "content", "token_count", "created_at"]
    show_full_result_count = False  # a count of every chunk is slow on a large corpus

    def has_add_permission(self, request):
        return False
