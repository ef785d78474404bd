from django.contrib import admin

from apps.runstate.models import Checkpoint, IterationLog, Plan, RunSnapshot


@admin.register(Plan)
class PlanAdmin(admin.ModelAdmin):
    list_display = ["thread", "version", "phase", "iteration", "updated_at"]
    search_fields = ["goal", "phase"]
    raw_id_fields = ["thread"]
    # Clients compare-and-set on version; changing it here would make their next write stale.
    readonly_fields = ["id", "version", "created_at", "updated_at"]


@admin.register(IterationLog)
class IterationLogAdmin(admin.ModelAdmin):
    list_display = ["task", "attempt", "outcome", "thread", "created_at"]
    list_filter = ["outcome"]
    search_fields = ["task", "summary", "error"]
    raw_id_fields = ["thread", "run"]
    readonly_fields = ["id", "attempt", "created_at", "updated_at"]


@admin.register(Checkpoint)
class CheckpointAdmin(admin.ModelAdmin):
    list_display = ["id", "run", "status", "reason", "created_at", "resumed_at"]
    list_filter = ["status"]
    search_fields = ["reason"]
    raw_id_fields = ["run"]
    # A checkpoint resumes at most once, through the API; these record that one resume.
    readonly_fields = ["id", "status", "resume_input", "resumed_at", "created_at", "updated_at"]


@admin.register(RunSnapshot)
class RunSnapshotAdmin(admin.ModelAdmin):
    list_display = ["run", "version", "updated_at"]
    raw_id_fields = ["run"]
    readonly_fields = ["id", "version", "created_at", "updated_at"]
