from django.contrib import admin

from apps.tenancy.models import Agent, ApiKey, Project, Resource
from apps.tenancy.services import api_key_revoke


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "created_at"]
    search_fields = ["slug", "name"]


@admin.register(Agent)
class AgentAdmin(admin.ModelAdmin):
    list_display = ["slug", "project", "name", "created_at"]
    list_filter = ["project"]
    search_fields = ["slug", "name"]


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = [
        "prefix",
        "agent",
        "name",
        "scope",
        "created_at",
        "last_used_at",
        "revoked_at",
    ]
    list_filter = ["agent__project", "scope"]
    # A key's scope is set when it is issued (audited); a wider one is a new key.
    readonly_fields = ["prefix", "key_hash", "scope", "last_used_at", "revoked_at"]
    actions = ["revoke"]

    @admin.action(description="Revoke selected keys")
    def revoke(self, request, queryset):
        for api_key in queryset.filter(revoked_at__isnull=True):
            api_key_revoke(api_key=api_key, actor=f"user:{request.user.username}")


@admin.register(Resource)
class ResourceAdmin(admin.ModelAdmin):
    list_display = ["external_id", "project", "created_at"]
    list_filter = ["project"]
    search_fields = ["external_id"]
