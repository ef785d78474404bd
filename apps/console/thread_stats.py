"""Per-thread figures for the thread list: open and failed runs, errors, in two grouped queries."""

from django.db.models import Count, Q

from apps.threads.models import Kind, Message, Run, RunStatus

# An error is an error message, or a tool result whose payload says it failed (status or
# status_code of 400 or more, an error, ok false), as the timeline marks them. A result that says
# so only in its text is marked in the timeline, but is not counted here: counting it would read
# every result of every listed thread.
ERRORS = Q(kind=Kind.ERROR) | Q(kind=Kind.TOOL_RESULT) & (
    Q(payload__status__gte=400)
    | Q(payload__status_code__gte=400)
    | Q(payload__has_key="error") & ~Q(payload__error=None) & ~Q(payload__error="")
    | Q(payload__ok=False)
)


def thread_activity(*, thread_ids: list) -> dict:
    """{thread id: {"running": n, "failed": n, "errors": n}} for the given threads."""
    if not thread_ids:
        return {}
    activity = {thread_id: {"running": 0, "failed": 0, "errors": 0} for thread_id in thread_ids}
    runs = (
        Run.objects.filter(
            thread_id__in=thread_ids, status__in=[RunStatus.RUNNING, RunStatus.FAILED]
        )
        .values_list("thread_id", "status")
        .annotate(n=Count("id"))
        .order_by()
    )
    for thread_id, status, count in runs:
        activity[thread_id][status] = count
    errors = (
        Message.objects.filter(ERRORS, thread_id__in=thread_ids)
        .values_list("thread_id")
        .annotate(n=Count("id"))
        .order_by()
    )
    for thread_id, count in errors:
        activity[thread_id]["errors"] = count
    return activity
