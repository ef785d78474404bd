from django.contrib import admin

from apps.profiles.models import SessionMemory, UserProfile

# Clients compare-and-set on version; changing it here would make their next write stale.
_READONLY = ["id", "version", "created_at", "updated_at", "updated_by"]


@admin.register(UserProfile)
class UserProfileAdmin(admin.ModelAdmin):
    list_display = ["resource", "agent", "version", "updated_by", "updated_at"]
    search_fields = ["resource__external_id", "content"]
    raw_id_fields = ["agent", "resource"]
    readonly_fields = _READONLY


@admin.register(SessionMemory)
class SessionMemoryAdmin(admin.ModelAdmin):
    list_display = ["thread", "version", "updated_by", "updated_at"]
    search_fields = ["objective", "state"]
    raw_id_fields = ["thread"]
    readonly_fields = _READONLY
