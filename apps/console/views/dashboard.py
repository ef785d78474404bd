"""Console pages: the dashboard and the background jobs list."""

from datetime import timedelta

from django.shortcuts import render
from django.urls import path
from django.utils import timezone

from apps.console.pages import paginate
from apps.console.roles import ROLES, role_required
from apps.episodic.selectors import entry_counts
from apps.jobs.models import JobStatus
from apps.jobs.selectors import job_health, job_list
from apps.knowledge.selectors import document_counts
from apps.tenancy.selectors import tenancy_counts
from apps.threads.selectors import thread_counts


@role_required(*ROLES)
def dashboard(request):
    since = timezone.now() - timedelta(hours=1)
    context = {
        **tenancy_counts(),
        **thread_counts(since=since),
        "entries": entry_counts(),
        "documents": document_counts(),
        "jobs": job_health(),
    }
    context["ingest_per_minute"] = round(context["recent"] / 60, 1)
    return render(request, "console/dashboard.html", context)


@role_required("operator", "admin")
def jobs(request):
    status = request.GET.get("status") or None
    if status not in JobStatus.values:
        status = None
    page = paginate(request, job_list(status=status, kind=request.GET.get("kind") or None))
    return render(
        request,
        "console/jobs.html",
        {"page": page, "status": status, "statuses": JobStatus.values, "query": _query(request)},
    )


def _query(request) -> str:
    params = request.GET.copy()
    params.pop("page", None)
    return params.urlencode()


urlpatterns = [
    path("", dashboard, name="dashboard"),
    path("jobs/", jobs, name="jobs"),
]
