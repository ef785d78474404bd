from django.contrib import admin

from apps.episodic.models import MemoryEntry


@admin.register(MemoryEntry)
class MemoryEntryAdmin(admin.ModelAdmin):
    list_display = ["__str__", "agent", "resource", "kind", "source", "status", "created_at"]
    list_filter = ["status", "kind", "source", "agent__project"]
    list_select_related = ["agent__project", "resource"]
    search_fields = ["content", "evidence"]
    raw_id_fields = ["agent", "resource", "thread", "message"]
    # Content and status feed the search index; the moderation queue changes them in step.
    readonly_fields = [
        "id",
        "content",
        "content_hash",
        "status",
        "status_changed_by",
        "status_changed_at",
        "recall_count",
        "last_recalled_at",
        "created_at",
        "updated_at",
    ]

    def has_add_permission(self, request):
        return False  # entries are created through the API or the console, which index them
