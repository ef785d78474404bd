"""Per-thread figures for the thread list: open, waiting and failed runs, errors, in two grouped
queries."""

from django.db.models import Count

from apps.threads.models import Message, Run, RunStatus


def thread_activity(*, thread_ids: list) -> dict:
    """{thread id: {"running": n, "suspended": n, "failed": n, "errors": n}} for the threads
    (suspended: runs waiting at a checkpoint for a human)."""
    if not thread_ids:
        return {}
    counted = (RunStatus.RUNNING, RunStatus.SUSPENDED, RunStatus.FAILED)
    activity = {thread_id: dict.fromkeys([*counted, "errors"], 0) for thread_id in thread_ids}
    runs = (
        Run.objects.filter(thread_id__in=thread_ids, status__in=counted)
        .values_list("thread_id", "status")
        .annotate(n=Count("id"))
        .order_by()
    )
    for thread_id, status, count in runs:
        activity[thread_id][status] = count
    # is_error was set on append by threads.outcome, the timeline's definition of an error.
    errors = (
        Message.objects.filter(is_error=True, thread_id__in=thread_ids)
        .values_list("thread_id")
        .annotate(n=Count("id"))
        .order_by()
    )
    for thread_id, count in errors:
        activity[thread_id]["errors"] = count
    return activity
