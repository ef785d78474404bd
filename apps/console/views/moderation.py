"""Console pages: the episodic moderation queue, each entry with its evidence and look-alikes.

Every action URL carries the list's query string, so an action can answer with the row as it
now is (or nothing, when the row no longer matches the status filter) and a plain form can
redirect back to the same list. An htmx action also answers, out of band, the page's pending
counts (all, and of the list as filtered) and the status badges of the acted-on entry where
other rows list it as similar (the action forms send the ids those rows show, so only badges on
the page are swapped).
"""

from dataclasses import dataclass

from django import forms
from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import path, reverse
from django.utils.text import Truncator
from django.views.decorators.http import require_POST

from apps.console.pages import paginate, query_without_page, render_page_or_fragment
from apps.console.roles import MODERATOR, actor, role_required
from apps.console.views.moderation_filters import filters_of
from apps.console.views.moderation_rules import approval_rules
from apps.console.views.moderation_turn import TurnLine, turn_with_evidence
from apps.core.errors import ApplicationError, NotFound
from apps.episodic.edits import entry_edit_approve
from apps.episodic.extraction import extraction_state
from apps.episodic.models import EntryStatus, MemoryEntry
from apps.episodic.queue import entry_queue
from apps.episodic.selectors import (
    SimilarEntries,
    entry_browse,
    entry_for_operator,
    entry_pending_count,
    entry_similar,
    extraction_counts_by_agent,
)
from apps.episodic.services import entry_bulk_moderate, entry_delete, entry_set_status
from apps.providers.endpoint import endpoint_configured
from apps.tenancy.selectors import agent_list

BULK_VERBS = {"approve": "Approved", "reject": "Rejected", "delete": "Deleted"}


class EntryEditForm(forms.Form):
    content = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}),
        error_messages={
            "required": "Content must not be blank: write the entry's text, or reject it instead."
        },
    )


class BulkForm(forms.Form):
    action = forms.ChoiceField(
        choices=[("", "choose…"), *((action, action) for action in BULK_VERBS)],
        error_messages={"required": "Choose what to do with the selected entries."},
    )
    entries = forms.ModelMultipleChoiceField(
        queryset=entry_browse(status=None),
        error_messages={
            "required": "Select at least one entry first (tick its box).",
            "invalid_choice": "A selected entry no longer exists; reload the page and try again.",
        },
    )


@dataclass
class EntryRow:
    entry: MemoryEntry
    turn: list[TurnLine]  # the messages around the evidence, the evidence marked in its own
    evidence_found: bool
    similar: SimilarEntries | None  # None: loaded on demand


@dataclass
class AgentExtraction:
    agent: object
    enabled: bool
    model: str
    reason: str
    turns: int
    stored: int
    duplicates: int
    rejected: int


@role_required(MODERATOR)
def moderation(request):
    """The queue: GET lists entries by the filters, POST applies a bulk action to selected ones."""
    if request.method == "POST":
        form = BulkForm(request.POST)
        if not form.is_valid():
            messages.error(request, next(iter(form.errors.values()))[0])
        else:
            action, entries = form.cleaned_data["action"], form.cleaned_data["entries"]
            try:
                changed = entry_bulk_moderate(entries=entries, action=action, actor=actor(request))
            except ApplicationError as error:  # e.g. approving next to a live twin: 409
                messages.error(request, error.message)
            else:
                unchanged = len(entries) - changed
                note = f"; {unchanged} already had that status" if unchanged else ""
                messages.success(request, f"{BULK_VERBS[action]} {_entries(changed)}{note}.")
        if not request.htmx:
            return redirect(_back(request))
    form, filters = filters_of(request)
    page = paginate(request, entry_queue(**filters))
    context = {
        "form": form,
        "filters_valid": not form.errors,
        "page": page,
        # Similar entries load with each row as it scrolls into view (moderation_more.py):
        # finding them embeds the entry's text, ~7 ms a row with a local model, more remotely.
        "rows": [_row(entry, similar=False) for entry in page],
        "status": filters["status"],
        "queue_count": page.paginator.count,
        "query": query_without_page(request),
        "back": _query_string(request),
        "pending_count": entry_pending_count(),
        "oob_pending": request.method == "POST" and request.htmx,
    }
    if not (request.htmx and request.headers.get("HX-Target") == "entry-list"):
        # The whole page: also after an htmx redirect here (HX-Location swaps the body).
        context["extraction"] = _extraction_overview()
        context["rules"] = approval_rules()
    return render_page_or_fragment(request, "console/moderation/list.html", "entry-list", context)


def _extraction_overview() -> dict:
    """Whether extraction runs, and per agent with a model: turns, stored, rejected."""
    counts = extraction_counts_by_agent()
    agents = []
    for agent in agent_list():
        state = extraction_state(agent=agent)
        done = counts.get(agent.pk, {})
        if not done and not state.enabled:
            continue  # an agent that never extracted and does not now: nothing to show
        agents.append(
            AgentExtraction(
                agent,
                state.enabled,
                state.model,
                state.reason,
                *(done.get(key) or 0 for key in ("turns", "stored", "duplicates", "rejected")),
            )
        )
    return {"endpoint": endpoint_configured(), "agents": agents}


@role_required(MODERATOR)
def entry_detail(request, entry_id):
    """The fragment #entry-<id> (a whole page without htmx); editing is cancelled to it."""
    entry = _entry(entry_id)
    return _render_row(request, entry) if entry else _gone(request)


@role_required(MODERATOR)
@require_POST
def entry_approve(request, entry_id):
    return _set_status(request, entry_id, EntryStatus.APPROVED)


@role_required(MODERATOR)
@require_POST
def entry_reject(request, entry_id):
    return _set_status(request, entry_id, EntryStatus.REJECTED)


@role_required(MODERATOR)
@require_POST
def entry_remove(request, entry_id):
    entry = _entry(entry_id)
    if entry is None:
        return _gone(request)
    entry_id = entry.pk
    entry_delete(entry=entry, actor=actor(request))
    messages.success(request, f"Deleted “{_short(entry)}”.")
    if not request.htmx:
        return redirect(_back(request))
    return render(request, "console/moderation/oob.html", _oob(request, entry_id, "deleted"))


@role_required(MODERATOR)
def entry_edit(request, entry_id):
    """GET: the row as an edit form. POST: save the edited content, then approve the entry."""
    entry = _entry(entry_id)
    if entry is None:
        return _gone(request)
    form = EntryEditForm(request.POST or None, initial={"content": entry.content})
    if form.is_valid():
        try:
            entry_edit_approve(
                entry=entry, content=form.cleaned_data["content"], actor=actor(request)
            )
        except ApplicationError as error:
            form.add_error("content", error.message.removeprefix("content: "))
        else:
            messages.success(request, f"Edited and approved “{_short(entry)}”.")
            return _answer(request, entry)
    return _render_row(request, entry, edit_form=form)


def _set_status(request, entry_id, status: str):
    entry = _entry(entry_id)
    if entry is None:
        return _gone(request)
    try:
        entry_set_status(entry=entry, status=status, actor=actor(request))
    except ApplicationError as error:  # e.g. approving next to a live twin: 409
        messages.error(request, error.message)
        entry.refresh_from_db()
        return _answer(request, entry)
    verb = "Approved" if status == EntryStatus.APPROVED else "Rejected"
    messages.success(request, f"{verb} “{_short(entry)}”.")
    return _answer(request, entry)


def _answer(request, entry):
    """After a change: the row as it now is, or nothing once the status filter hides it."""
    if not request.htmx:
        return redirect(_back(request))
    status = filters_of(request)[1]["status"]
    oob = _oob(request, entry.pk, entry.status)
    if status and entry.status != status:
        return render(request, "console/moderation/oob.html", oob)
    return _render_row(request, entry, oob=oob)


def _oob(request, entry_id, status: str) -> dict:
    """What an htmx action also updates: the pending count, the count of the queue as filtered,
    and this entry's similar badges in the rows that show it (sent by the form as `shown`)."""
    shown = set(request.POST.getlist("shown"))
    form, filters = filters_of(request)
    return {
        "oob_pending": True,
        "pending_count": entry_pending_count(),
        "queue_count": entry_queue(**filters).count() if not form.errors else None,
        "status": filters["status"],
        "oob_badge": {"id": entry_id, "status": status} if str(entry_id) in shown else None,
    }


def _render_row(request, entry, edit_form=None, oob=None):
    context = {"row": _row(entry), "edit_form": edit_form, "back": _query_string(request)}
    if request.htmx:
        return render(request, "console/moderation/entry.html", {**context, "oob": oob})
    return render(request, "console/moderation/detail.html", context)


def _row(entry: MemoryEntry, similar: bool = True) -> EntryRow:
    turn, found = turn_with_evidence(entry)
    return EntryRow(entry, turn, found, entry_similar(entry=entry) if similar else None)


def _entry(entry_id) -> MemoryEntry | None:
    try:
        return entry_for_operator(entry_id=entry_id)
    except NotFound:
        return None


def _gone(request):
    """Another moderator deleted the entry: say so and drop its row."""
    messages.error(request, "That entry no longer exists; someone may have deleted it.")
    return HttpResponse("") if request.htmx else redirect(_back(request))


def _back(request) -> str:
    """The list this action came from (its query string re-encoded, so never another site)."""
    return reverse("console:moderation") + _query_string(request)


def _query_string(request) -> str:
    """This request's query string, which names the list's filters and page: "?…" or ""."""
    query = request.GET.urlencode()
    return f"?{query}" if query else ""


def _short(entry) -> str:
    return Truncator(entry.content).chars(60)


def _entries(n: int) -> str:
    return f"{n} entr{'y' if n == 1 else 'ies'}"


urlpatterns = [
    path("moderation/", moderation, name="moderation"),
    path("moderation/<uuid:entry_id>/", entry_detail, name="moderation-entry"),
    path("moderation/<uuid:entry_id>/approve/", entry_approve, name="moderation-approve"),
    path("moderation/<uuid:entry_id>/reject/", entry_reject, name="moderation-reject"),
    path("moderation/<uuid:entry_id>/delete/", entry_remove, name="moderation-delete"),
    path("moderation/<uuid:entry_id>/edit/", entry_edit, name="moderation-edit"),
]
