from django.contrib import admin

from apps.audit.models import AuditEvent


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    list_display = ["at", "actor", "action", "object_type", "object_id", "project", "summary"]
    list_filter = ["action", "object_type", "project"]
    search_fields = ["actor", "object_id", "summary"]
    date_hierarchy = "at"
    show_full_result_count = False

    # The audit log is a record: nobody adds, edits or removes events by hand.
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
