"""Console pages: threads (filters, full-text search) and a thread's timeline.

The timeline shows where observational memory and compaction stand in for messages: a band
before the first message each covers, and the contexts given to the agent beside the turns
they preceded (see snapshots_by_turn).
"""

from dataclasses import dataclass, field

from django import forms
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.urls import path
from django.utils.http import content_disposition_header

from apps.audit.selectors import checkpoint_resumers
from apps.console.pages import (
    filter_problems,
    paginate,
    query_without_page,
    render_page_or_fragment,
)
from apps.console.roles import OPERATOR, role_required
from apps.console.thread_stats import thread_activity
from apps.console.timeline import (
    Body,
    json_text,
    mark_runs,
    run_duration,
    run_spans,
    snippet,
    timeline_items,
)
from apps.console.timeline_html import code_html, sidebar_runs_html, timeline_html
from apps.context.selectors import snapshots_by_turn
from apps.context.snapshots import snapshot_list
from apps.core.errors import NotFound
from apps.episodic.consolidation import consolidation_state
from apps.memconfig.selectors import config_effective
from apps.observations.observer import BUFFER_RATIO
from apps.observations.selectors import (
    observation_failures,
    observation_list,
    observations_active,
    summary_latest,
)
from apps.observations.services import MemoryWork, memory_work_state
from apps.retrieval.selectors import retrieve, threads_matching
from apps.runstate.selectors import (
    artifact_for_operator,
    artifacts_of_runs,
    run_state_for_thread,
)
from apps.search.item_text import said_text
from apps.tenancy.selectors import agent_list, project_list
from apps.threads.selectors import (
    thread_browse,
    thread_for_operator,
    timeline_page,
)

TIMELINE_PAGE = 100
SEARCH_HITS_FOR_FILTER = 500
SIDEBAR_CONTEXTS = 5
SIDEBAR_FAILURES = 10


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
    """The threads, newest activity first; a filter value that matches nothing known (a project
    or agent that is not there, a date that is none) is a 400 saying so, listing nothing: the
    other filters alone listed threads the operator did not ask for."""
    form = ThreadFilterForm(request.GET or None)
    problems = filter_problems(form)
    if problems:
        context = {"form": form, "problems": problems, "page": None}
        return render_page_or_fragment(
            request, "console/threads/list.html", "thread-list", context, status=400
        )
    filters = form.cleaned_data if form.is_bound else {}
    thread_ids = None
    best_hits: dict = {}
    if filters.get("q"):
        project = filters.get("project")
        best_hits = threads_matching(
            query=filters["q"],
            project_id=project.id if project else None,
            limit=SEARCH_HITS_FOR_FILTER,
        )
        thread_ids = set(best_hits)
    threads = thread_browse(
        project_id=filters["project"].id if filters.get("project") else None,
        agent_id=filters["agent"].id if filters.get("agent") else None,
        resource=filters.get("resource", ""),
        channel=filters.get("channel", ""),
        since=filters.get("since"),
        until=filters.get("until"),
        thread_ids=thread_ids,
    )
    page = paginate(request, threads)
    _annotate_threads(list(page), best_hits, filters.get("q", ""))
    context = {"form": form, "page": page, "query": query_without_page(request)}
    return render_page_or_fragment(request, "console/threads/list.html", "thread-list", context)


def _annotate_threads(threads: list, best_hits: dict, query: str) -> None:
    """Give a page of threads their open and failed runs, error count and best search hit."""
    activity = thread_activity(thread_ids=[thread.id for thread in threads])
    for thread in threads:
        thread.activity = activity.get(thread.id, {})
        hit = best_hits.get(thread.id)
        thread.hit = None
        if hit is not None and hit.item.message is not None:
            thread.hit = {
                "seq": hit.item.message.seq,
                "role": hit.item.message.role,
                "snippet": snippet(said_text(hit.item.content), query),
            }


@role_required(OPERATOR)
def thread_detail(request, thread_id):
    """A thread's timeline: the newest messages, or with ?seq=N a window around message N."""
    thread = _thread(thread_id)
    around = _int(request.GET.get("seq"))
    if around is not None and not 1 <= around <= thread.last_seq:
        around = None  # a stale or mistyped link still opens the thread
    messages, first_seq = _whole_steps(
        thread, *timeline_page(thread=thread, around_seq=around, size=TIMELINE_PAGE)
    )
    memory = _memory(thread)
    work, gauges = _gauges(thread, memory["active"], memory["summary"])
    bands_before = _place(thread, messages, memory["bands"])
    run_state = run_state_for_thread(thread=thread)
    # One grouped query for the bounds of the page's runs and of the sidebar's.
    bounds = run_spans(
        run_ids={message.run_id for message in messages} | {run.id for run in run_state["runs"]}
    )
    timeline = _items(messages, bounds, highlight=around)
    sidebar = _sidebar_runs(run_state, bounds)
    context = {
        "thread": thread,
        "timeline": timeline,
        "timeline_html": timeline_html(timeline, around),
        "first_seq": first_seq,
        "highlight": around,
        "bands_before": bands_before,
        "contexts": snapshot_list(thread=thread)[:SIDEBAR_CONTEXTS],
        "strategy": work.strategy,
        "memory_work": work,
        "gauges": gauges,
        "failures": observation_failures(thread=thread)[:SIDEBAR_FAILURES],
        "consolidation": consolidation_state(thread=thread),
        **memory,
        **_later(thread, messages),
        **run_state,
        **sidebar,
        "latest_run": run_state["runs"][0] if run_state["runs"] else None,
        "error_count": thread_activity(thread_ids=[thread.id])[thread.id]["errors"],
    }
    return render(request, "console/threads/detail.html", context)


@role_required(OPERATOR)
def thread_earlier(request, thread_id):
    """The fragment #load-earlier: older messages, and a button for the ones before them."""
    thread = _thread(thread_id)
    messages, first_seq = _whole_steps(
        thread,
        *timeline_page(
            thread=thread, before_seq=_int(request.GET.get("before")), size=TIMELINE_PAGE
        ),
        tail=False,
    )
    bands_before = _place(thread, messages, _memory(thread)["bands"])
    timeline = _items(messages)
    context = {
        "thread": thread,
        "timeline": timeline,
        "timeline_html": timeline_html(timeline),
        "first_seq": first_seq,
        "bands_before": bands_before,
    }
    return render(request, "console/threads/load-earlier.html", context)


@role_required(OPERATOR)
def thread_later(request, thread_id):
    """The fragment #load-later: newer messages, and a button for the ones after them."""
    thread = _thread(thread_id)
    messages, _ = _whole_steps(
        thread,
        *timeline_page(
            thread=thread, after_seq=_int(request.GET.get("after")) or 0, size=TIMELINE_PAGE
        ),
        head=False,
    )
    # A band that began before these messages is already shown above them.
    _place(thread, messages, _memory(thread)["bands"])
    timeline = _items(messages)
    context = {
        "thread": thread,
        "timeline": timeline,
        "timeline_html": timeline_html(timeline),
        **_later(thread, messages),
    }
    return render(request, "console/threads/load-later.html", context)


def _whole_steps(thread, messages: list, first_seq, *, head: bool = True, tail: bool = True):
    """Keep a tool call and its result on one page: a page does not begin with a result (head)
    or end with a call (tail) while there are messages beyond it; those go to the neighbouring
    page, whose "load" button starts or ends where this page now does.

    A page loaded below shown messages keeps its head, one loaded above them its tail: the
    messages next to those are not loaded again, so nothing may be left for them to show.
    """
    if head and len(messages) > 1 and messages[0].kind == "tool_result" and messages[0].seq > 1:
        messages = messages[1:]
    last = thread.last_seq
    if tail and len(messages) > 1 and messages[-1].kind == "tool_call" and messages[-1].seq < last:
        messages = messages[:-1]
    return messages, (messages[0].seq if messages else first_seq)


def _items(messages, bounds: dict | None = None, highlight=None) -> list:
    """The page's messages as timeline items, with the runs they begin and end (their bounds
    read unless given)."""
    items = timeline_items(messages)
    runs = {message.run_id: message.run for message in messages if message.run_id}
    if bounds is None:
        bounds = run_spans(run_ids=runs)
    mark_runs(items, runs, bounds)
    # A run's artifacts are listed where the run ends, as what it produced.
    ending = [span for item in items for span in item.run_ends]
    produced = artifacts_of_runs(run_ids=[span.run.id for span in ending])
    for span in ending:
        span.artifacts = produced.get(span.run.id, [])
    for item in items:
        item.open = highlight is not None and any(m.seq == highlight for m in item.messages)
    return items


def _sidebar_runs(run_state: dict, bounds: dict) -> dict:
    """Runs with the seq of their first message (their place in the timeline), checkpoints and
    snapshots with their JSON indented, and who resumed each checkpoint."""
    for run in run_state["runs"]:
        run.first_seq, run.last_seq = bounds.get(run.id, (None, None))
        run.duration = run_duration(run)
    resumers = checkpoint_resumers(
        checkpoint_ids=[c.id for c in run_state["checkpoints"] if c.status == "resumed"]
    )
    for checkpoint in run_state["checkpoints"]:
        checkpoint.state_html = code_html(Body(json_text(checkpoint.state), True), "State")
        checkpoint.resume_html = (
            None
            if checkpoint.resume_input is None
            else code_html(Body(json_text(checkpoint.resume_input), True), "Resume input")
        )
        checkpoint.resumed_by = resumers.get(str(checkpoint.id), "")
    for snapshot in run_state["snapshots"]:
        snapshot.tree_html = code_html(Body(json_text(snapshot.tree), True), "Agent tree")
    return {"runs_html": sidebar_runs_html(run_state["runs"])}


def _later(thread, messages) -> dict:
    """Where the next "load later" request starts, or None when the newest message is shown."""
    last = messages[-1].seq if messages else None
    return {"last_seq": last if last is not None and last < thread.last_seq else None}


@dataclass
class Band:
    """An observation or the summary, shown before the first timeline message it stands for."""

    kind: str  # observation | reflection | summary
    row: object  # the Observation or ThreadSummary
    first_seq: int
    last_seq: int
    sources: list = field(default_factory=list)  # the observations a reflection replaced


def _memory(thread) -> dict:
    """The thread's observations and summary as bands, and gauges against their thresholds.

    One query reads the active observations (the gauges need all of them, and the reflector
    keeps them few), one more the latest summary.
    """
    active = observations_active(thread=thread)
    summary = summary_latest(thread=thread)
    bands = [
        Band("reflection" if row.is_reflection else "observation", row, row.first_seq, row.last_seq)
        for row in active
    ]
    if summary is not None:
        bands.insert(0, Band("summary", summary, 1, summary.covers_up_to_seq))
    return {
        "active": active,
        "observed_up_to": active[-1].last_seq if active else 0,
        "summary": summary,
        "bands": bands,
    }


def _gauges(thread, active, summary) -> tuple[MemoryWork, list[dict]]:
    """Return who does the agent's memory work and the token counts that work watches."""
    config = config_effective(agent=thread.agent)
    observed = sum(row.message_tokens for row in active)
    gauges = [
        _gauge(
            "Unobserved messages",
            thread.token_count - observed,
            config["observer_message_tokens"],
        ),
        _gauge(
            "Active observations",
            sum(row.tokens for row in active),
            config["reflector_observation_tokens"],
        ),
    ]
    if config["context_strategy"] == "compaction":
        # What a context would hold: the summary in place of the messages it covers.
        estimate = thread.token_count
        if summary is not None:
            estimate += summary.tokens - summary.message_tokens
        gauges.append(
            _gauge("Thread, summary included", estimate, config["compaction_budget_tokens"])
        )
    return memory_work_state(config=config), gauges


def _gauge(label: str, value: int, threshold: int) -> dict:
    # Background work is queued from BUFFER_RATIO of a threshold: the meter turns amber there.
    return {
        "label": label,
        "value": value,
        "threshold": threshold,
        "starts": int(BUFFER_RATIO * threshold),
    }


def _place(thread, messages, bands: list[Band]) -> list[Band]:
    """Put each band before the first of these messages it covers; return those begun earlier.

    A band that begins before the first message is returned instead, for the top of the page.
    The sources of a reflection are read only when it is shown. Each message also gets the
    contexts given before its turn.
    """
    for message in messages:
        message.bands = []
    if not messages:
        return []
    first, last = messages[0].seq, messages[-1].seq
    shown = [band for band in bands if band.first_seq <= last and band.last_seq >= first]
    reflections = {band.row.id: band for band in shown if band.kind == "reflection"}
    if reflections:
        sources = observation_list(thread=thread, status="superseded").filter(
            superseded_by__in=list(reflections)
        )
        for source in sources.order_by("first_seq"):
            reflections[source.superseded_by_id].sources.append(source)
    begun_earlier = []
    for band in shown:
        if band.first_seq < first:
            begun_earlier.append(band)
        else:
            next(m for m in messages if m.seq >= band.first_seq).bands.append(band)
    turns = snapshots_by_turn(thread=thread, messages=messages)
    for message in messages:
        message.contexts = turns.get(message.seq, [])
    return begun_earlier


@role_required(OPERATOR)
def thread_search(request, thread_id):
    """The fragment #thread-search-results: hits in this thread with signals and ranges."""
    thread = _thread(thread_id)
    query = request.POST.get("q", "").strip()
    results = []
    if query:
        results = retrieve(
            agent=thread.agent, query=query, scopes=["messages"], thread_id=thread.id
        ).hits
    return render(
        request,
        "console/threads/thread-search-results.html",
        {"thread": thread, "query": query, "results": results},
    )


@role_required(OPERATOR)
def artifact_download(request, artifact_id):
    """An artifact's bytes as the run stored them, as an attachment (never shown inline)."""
    try:
        artifact = artifact_for_operator(artifact_id=artifact_id)
    except NotFound as exc:
        raise Http404(exc.message) from None
    response = HttpResponse(bytes(artifact.content), content_type=artifact.content_type)
    response["Content-Disposition"] = content_disposition_header(True, artifact.name)
    return response


def _thread(thread_id):
    try:
        return thread_for_operator(thread_id=thread_id)
    except NotFound as exc:
        raise Http404(exc.message) from None


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
    path("artifacts/<uuid:artifact_id>/", artifact_download, name="artifact"),
]
