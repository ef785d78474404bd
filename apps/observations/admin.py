from django.contrib import admin

from apps.observations.models import Observation, ObservationFailure, ThreadSummary


class ReadOnlyAdmin(admin.ModelAdmin):
    # Rows are written by the background job only; editing one would break the seq coverage.
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(Observation)
class ObservationAdmin(ReadOnlyAdmin):
    list_display = [
        "__str__",
        "generation",
        "first_seq",
        "last_seq",
        "tokens",
        "method",
        "created_at",
    ]
    list_filter = ["method", "is_reflection"]
    raw_id_fields = ["thread", "superseded_by"]
    search_fields = ["content"]


@admin.register(ThreadSummary)
class ThreadSummaryAdmin(ReadOnlyAdmin):
    list_display = ["__str__", "version", "covers_up_to_seq", "tokens", "method", "created_at"]
    list_filter = ["method"]
    raw_id_fields = ["thread"]


@admin.register(ObservationFailure)
class ObservationFailureAdmin(ReadOnlyAdmin):
    list_display = [
        "stage",
        "thread",
        "first_seq",
        "last_seq",
        "model",
        "error",
        "outcome",
        "created_at",
    ]
    list_filter = ["stage", "model"]
    raw_id_fields = ["thread"]
    search_fields = ["error"]
