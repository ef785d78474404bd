"""Console pages: threads (filters, full-text search) and a thread's timeline."""

from django import forms
from django.shortcuts import render
from django.urls import path

from apps.console.pages import paginate, query_without_page, render_page_or_fragment
from apps.console.roles import OPERATOR, role_required
from apps.runstate.selectors import run_state_for_thread
from apps.search.models import ItemKind
from apps.search.scope import Scope
from apps.search.selectors import search, search_for_agent
from apps.tenancy.selectors import agent_list, project_list
from apps.threads.selectors import (
    thread_browse,
    thread_for_operator,
    timeline_page,
)

TIMELINE_PAGE = 100
SEARCH_HITS_FOR_FILTER = 500


class ThreadFilterForm(forms.Form):
    q = forms.CharField(required=False, label="Messages containing")
    project = forms.ModelChoiceField(queryset=project_list(), required=False, empty_label="any")
    agent = forms.ModelChoiceField(queryset=agent_list(), required=False, empty_label="any")
    resource = forms.CharField(required=False, max_length=200)
    channel = forms.CharField(required=False, max_length=64)
    since = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    until = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))


@role_required(OPERATOR)
def thread_list(request):
    form = ThreadFilterForm(request.GET or None)
    form.is_valid()  # a bad field is reported beside its input; the valid ones still filter
    filters = getattr(form, "cleaned_data", {})
    thread_ids = None
    if filters.get("q"):
        project = filters.get("project")
        scope = Scope(kind=ItemKind.MESSAGE, project_id=project.id if project else None)
        hits = search(
            scopes=[scope], query=filters["q"], top_k=SEARCH_HITS_FOR_FILTER, signals=("lexical",)
        )
        thread_ids = {hit.item.thread_id for hit in hits}
    threads = thread_browse(
        project_id=filters["project"].id if filters.get("project") else None,
        agent_id=filters["agent"].id if filters.get("agent") else None,
        resource=filters.get("resource", ""),
        channel=filters.get("channel", ""),
        since=filters.get("since"),
        until=filters.get("until"),
        thread_ids=thread_ids,
    )
    context = {
        "form": form,
        "page": paginate(request, threads),
        "query": query_without_page(request),
    }
    return render_page_or_fragment(request, "console/threads/list.html", "thread-list", context)


@role_required(OPERATOR)
def thread_detail(request, thread_id):
    """A thread's timeline: the newest messages, or with ?seq=N a window around message N."""
    thread = thread_for_operator(thread_id=thread_id)
    around = _int(request.GET.get("seq"))
    if around is not None and not 1 <= around <= thread.last_seq:
        around = None  # a stale or mistyped link still opens the thread
    messages, first_seq = timeline_page(thread=thread, around_seq=around, size=TIMELINE_PAGE)
    context = {
        "thread": thread,
        "timeline": messages,
        "first_seq": first_seq,
        "highlight": around,
        **_later(thread, messages),
        **run_state_for_thread(thread=thread),
    }
    return render(request, "console/threads/detail.html", context)


@role_required(OPERATOR)
def thread_earlier(request, thread_id):
    """The fragment #load-earlier: older messages, and a button for the ones before them."""
    thread = thread_for_operator(thread_id=thread_id)
    messages, first_seq = timeline_page(
        thread=thread, before_seq=_int(request.GET.get("before")), size=TIMELINE_PAGE
    )
    context = {"thread": thread, "timeline": messages, "first_seq": first_seq}
    return render(request, "console/threads/load-earlier.html", context)


@role_required(OPERATOR)
def thread_later(request, thread_id):
    """The fragment #load-later: newer messages, and a button for the ones after them."""
    thread = thread_for_operator(thread_id=thread_id)
    messages, _ = timeline_page(
        thread=thread, after_seq=_int(request.GET.get("after")) or 0, size=TIMELINE_PAGE
    )
    context = {"thread": thread, "timeline": messages, **_later(thread, messages)}
    return render(request, "console/threads/load-later.html", context)


def _later(thread, messages) -> dict:
    """Where the next "load later" request starts, or None when the newest message is shown."""
    last = messages[-1].seq if messages else None
    return {"last_seq": last if last is not None and last < thread.last_seq else None}


@role_required(OPERATOR)
def thread_search(request, thread_id):
    """The fragment #thread-search-results: hits in this thread with signals and ranges."""
    thread = thread_for_operator(thread_id=thread_id)
    query = request.POST.get("q", "").strip()
    results = []
    if query:
        results = search_for_agent(
            agent=thread.agent, query=query, kinds=[ItemKind.MESSAGE], thread_id=thread.id
        ).hits
    return render(
        request,
        "console/threads/thread-search-results.html",
        {"thread": thread, "query": query, "results": results},
    )


def _int(value) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


urlpatterns = [
    path("threads/", thread_list, name="threads"),
    path("threads/<uuid:thread_id>/", thread_detail, name="thread"),
    path("threads/<uuid:thread_id>/earlier/", thread_earlier, name="thread-earlier"),
    path("threads/<uuid:thread_id>/later/", thread_later, name="thread-later"),
    path("threads/<uuid:thread_id>/search/", thread_search, name="thread-search"),
]
