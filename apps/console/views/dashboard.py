"""Console pages: the dashboard, the projects and agents list, and the background jobs list."""

from datetime import timedelta
from urllib.parse import urlencode

from django import forms
from django.contrib import messages
from django.shortcuts import redirect, render
from django.urls import path, resolve, reverse
from django.utils import timezone

from apps.console.pages import paginate, query_without_page
from apps.console.roles import (
    ADMIN,
    CURATOR,
    OPERATOR,
    ROLES,
    forbidden,
    role_required,
    user_roles,
)
from apps.episodic.selectors import entry_counts
from apps.jobs.models import JobStatus
from apps.jobs.selectors import job_health, job_kind_known, job_kinds, job_list
from apps.knowledge.models import DocumentStatus
from apps.knowledge.selectors import document_counts
from apps.tenancy.selectors import agent_list, project_list, tenancy_counts
from apps.tenancy.services import agent_get_or_create, project_get_or_create
from apps.threads.selectors import thread_counts

INGEST_WINDOW = timedelta(hours=1)


@role_required(*ROLES)
def dashboard(request):
    roles = user_roles(request.user)
    counts = {**tenancy_counts(), **thread_counts(since=timezone.now() - INGEST_WINDOW)}
    entries, documents, jobs = entry_counts(), document_counts(), job_health()
    minutes = INGEST_WINDOW.total_seconds() / 60

    def stat(label, value, page, note="", **query):
        return {"label": label, "value": value, "note": note, "href": _link(roles, page, query)}

    context = {
        "totals": [
            stat("Projects", counts["projects"], "projects"),
            stat("Agents", counts["agents"], "projects"),
            stat("Threads", counts["threads"], "threads"),
            stat("Messages", counts["message_total"], "threads"),
            stat(
                "Entries pending approval",
                entries.get("pending", 0),
                "moderation",
                status="pending",
            ),
            stat(
                "Ingest rate, last hour",
                counts["recent"],
                "threads",
                note=f"{counts['recent'] / minutes:.1f} messages/min",
            ),
        ],
        "documents": [
            {**stat(status, documents.get(status, 0), "knowledge", status=status), "badge": True}
            for status in DocumentStatus.values
        ],
        "jobs": [
            stat("Pending", jobs["pending"], "jobs", note=_waiting(jobs), status="pending"),
            stat("Running", jobs["running"], "jobs", status="running"),
            stat("Failed", jobs["failed"], "jobs", status="failed"),
            stat("Succeeded", jobs["succeeded"], "jobs", status="succeeded"),
        ],
    }
    return render(request, "console/dashboard.html", context)


def _link(roles: set[str], page: str, query: dict) -> str | None:
    """The URL of a console page with a query, or None when none of roles may open it."""
    url = reverse(f"console:{page}")
    if not roles & set(getattr(resolve(url).func, "required_roles", ())):
        return None
    return f"{url}?{urlencode(query)}" if query else url


def _waiting(jobs: dict) -> str:
    seconds = jobs["oldest_pending_seconds"]
    return "none waiting" if seconds is None else f"oldest waiting {seconds:.0f} s"


class ProjectCreateForm(forms.Form):
    slug = forms.SlugField(max_length=64, help_text="Letters, digits, - and _.")
    name = forms.CharField(max_length=200, required=False)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, auto_id="new-project-%s", **kwargs)


class AgentCreateForm(forms.Form):
    project = forms.ModelChoiceField(queryset=project_list(), empty_label="choose a project")
    slug = forms.SlugField(max_length=64)
    name = forms.CharField(max_length=200, required=False)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, auto_id="new-agent-%s", **kwargs)


@role_required(*ROLES)
def projects(request):
    """Every project with its agents, linked to the pages the viewer's roles open; an admin
    also creates projects and agents here (POST with form=project or form=agent)."""
    roles = user_roles(request.user)
    project_form, agent_form = ProjectCreateForm(), AgentCreateForm()
    if request.method == "POST":
        if ADMIN not in roles:
            return forbidden(request, "Creating projects and agents needs the role admin.")
        if request.POST.get("form") == "agent":
            agent_form = AgentCreateForm(request.POST)
            if _create_agent(request, agent_form):
                return redirect("console:projects")
        else:
            project_form = ProjectCreateForm(request.POST)
            if _create_project(request, project_form):
                return redirect("console:projects")
    agents = {}
    for agent in agent_list().order_by("slug"):
        agents.setdefault(agent.project_id, []).append(agent)
    rows = [
        {"project": project, "agents": agents.get(project.id, [])}
        for project in project_list().order_by("slug")
    ]
    context = {
        "rows": rows,
        "threads": OPERATOR in roles,
        "knowledge": CURATOR in roles,
        "config": ADMIN in roles,
        "manage": ADMIN in roles,
        "project_form": project_form,
        "agent_form": agent_form,
    }
    return render(
        request,
        "console/projects.html",
        context,
        status=400 if _bound_invalid(project_form, agent_form) else 200,
    )


def _bound_invalid(*forms_: forms.Form) -> bool:
    return any(form.is_bound and not form.is_valid() for form in forms_)


def _create_project(request, form: ProjectCreateForm) -> bool:
    if not form.is_valid():
        return False
    project, created = project_get_or_create(**form.cleaned_data)
    if not created:
        form.add_error("slug", f"A project {project.slug} exists already; choose another slug.")
        return False
    messages.success(request, f"Created project {project.slug}. Add an agent to it below.")
    return True


def _create_agent(request, form: AgentCreateForm) -> bool:
    if not form.is_valid():
        return False
    agent, created = agent_get_or_create(**form.cleaned_data)
    if not created:
        form.add_error("slug", f"{agent} exists already; choose another slug.")
        return False
    messages.success(request, f"Created agent {agent}. Issue it an API key on the API keys page.")
    return True


@role_required(OPERATOR, ADMIN)
def jobs(request):
    """Background jobs, newest first; an unknown ?status= or ?kind= is a 400 saying so."""
    status = request.GET.get("status") or None
    kind = request.GET.get("kind") or None
    problem = None
    if status is not None and status not in JobStatus.values:
        problem = f"status={status}: no such job status; choose {', '.join(JobStatus.values)}."
    elif kind is not None and not job_kind_known(kind):
        problem = f"kind={kind}: no job of this kind; choose {', '.join(job_kinds())}."
    if problem:
        context = {"page": None, "status": None, "statuses": JobStatus.values, "problem": problem}
        return render(request, "console/jobs.html", context, status=400)
    jobs = job_list(status=status, kind=kind)
    # Ids order by millisecond only; the timestamp keeps jobs of one millisecond in order.
    page = paginate(request, jobs.order_by("-created_at", "-id"))
    return render(
        request,
        "console/jobs.html",
        {
            "page": page,
            "status": status,
            "kind": kind,
            "statuses": JobStatus.values,
            "query": query_without_page(request),
        },
    )


urlpatterns = [
    path("", dashboard, name="dashboard"),
    path("projects/", projects, name="projects"),
    path("jobs/", jobs, name="jobs"),
]
