from django.contrib import admin

from apps.threads.models import Message, Run, Thread


@admin.register(Thread)
class ThreadAdmin(admin.ModelAdmin):
    list_display = ["__str__", "agent", "channel", "external_id", "message_count", "created_at"]
    list_filter = ["agent__project", "channel"]
    list_select_related = ["agent__project"]
    search_fields = ["title", "external_id"]
    raw_id_fields = ["resource"]
    # thread_append_messages keeps the counters in step with the gap-free message numbering.
    readonly_fields = [
        "id",
        "last_seq",
        "message_count",
        "token_count",
        "last_message_at",
        "created_at",
        "updated_at",
    ]


@admin.register(Message)
class MessageAdmin(admin.ModelAdmin):
    list_display = ["__str__", "role", "kind", "name", "token_count", "created_at"]
    list_filter = ["role", "kind"]
    search_fields = ["content", "name", "idempotency_key"]
    raw_id_fields = ["run"]
    # The content is indexed for search and seq numbers the log: both change only through the API.
    readonly_fields = ["id", "thread", "seq", "content", "token_count", "idempotency_key"]
    show_full_result_count = False  # a count of every message is slow on a large log

    def has_add_permission(self, request):
        return False  # messages are appended through the API, which numbers them


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    list_display = ["id", "thread", "name", "status", "created_at", "finished_at"]
    list_filter = ["status"]
    search_fields = ["name", "summary", "error"]
    raw_id_fields = ["thread"]
    readonly_fields = ["id", "created_at", "updated_at", "finished_at"]
