from django.contrib import admin

from apps.actions.models import ActionEvent, ActionSecret, ActionWebhook
from apps.actions.services import action_secret


@admin.register(ActionWebhook)
class ActionWebhookAdmin(admin.ModelAdmin):
    list_display = ["name", "url", "project", "active", "updated_at"]
    list_filter = ["active", "project"]
    search_fields = ["name", "url"]

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        action_secret(project_id=obj.project_id)  # its deliveries are signed with it


@admin.register(ActionSecret)
class ActionSecretAdmin(admin.ModelAdmin):
    """Read it here to check signatures; delete it and the next delivery makes a new one."""

    list_display = ["project", "created_at"]
    readonly_fields = ["project", "secret", "created_at"]
    fields = readonly_fields

    def has_add_permission(self, request):
        return False


@admin.register(ActionEvent)
class ActionEventAdmin(admin.ModelAdmin):
    list_display = ["name", "delivery", "attempts", "response_status", "thread", "created_at"]
    list_filter = ["delivery", "name"]
    search_fields = ["name", "argument", "error"]
    readonly_fields = [field.name for field in ActionEvent._meta.fields]

    def has_add_permission(self, request):
        return False
