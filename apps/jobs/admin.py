from django.contrib import admin

from apps.jobs.models import Job


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    list_display = ["kind", "key", "status", "attempts", "run_after", "locked_by", "finished_at"]
    list_filter = ["status", "kind"]
    search_fields = ["kind", "key", "error"]
    # The worker owns the lock and progress; status and run_after stay editable to retry a job.
    readonly_fields = [
        "id",
        "attempts",
        "locked_at",
        "locked_by",
        "progress_done",
        "progress_total",
        "progress_note",
        "finished_at",
        "created_at",
        "updated_at",
    ]
    show_full_result_count = False
