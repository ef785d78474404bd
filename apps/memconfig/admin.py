"""Memory config levels and their version history, read-only: every change goes through the
console's config editor (or manage.py memory_config), which records a version for it."""

from django.contrib import admin

from apps.memconfig.models import MemoryConfig, MemoryConfigVersion


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class VersionInline(admin.TabularInline):
    model = MemoryConfigVersion
    fields = ["version", "changed_by", "changed_at", "before", "after", "note"]
    readonly_fields = fields
    extra = 0
    can_delete = False
    ordering = ["-version"]

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(MemoryConfig)
class MemoryConfigAdmin(ReadOnlyAdmin):
    list_display = ["__str__", "project", "agent", "version", "updated_at"]
    list_filter = ["project"]
    list_select_related = ["project", "agent__project"]
    search_fields = ["project__slug", "agent__slug"]
    inlines = [VersionInline]


@admin.register(MemoryConfigVersion)
class MemoryConfigVersionAdmin(ReadOnlyAdmin):
    list_display = ["config", "version", "changed_by", "changed_at", "note"]
    list_filter = ["changed_by"]
    list_select_related = ["config__project", "config__agent__project"]
    search_fields = ["changed_by", "note"]
    date_hierarchy = "changed_at"

    def has_delete_permission(self, request, obj=None):
        return False  # the history is what a rollback restores from
