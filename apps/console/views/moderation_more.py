"""Console pages beside the moderation queue: bulk decisions on everything a filter matches,
each entry's similar entries loaded on demand, and the conversation around an entry's evidence.

The conversation view is what a moderator may read of a thread: the messages around the
evidence message and nothing else (no runs, plan, observations, other contexts); the thread
page itself stays an operator's.
"""

from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import path, reverse
from django.utils.html import format_html

from apps.console.roles import MODERATOR, actor, role_required
from apps.console.views.moderation import _entries, _entry, _query_string
from apps.console.views.moderation_filters import filters_of
from apps.console.views.moderation_turn import evidence_in_source
from apps.episodic.queue import entries_moderate_matching, entry_queue
from apps.episodic.selectors import entry_similar
from apps.threads.selectors import messages_around

# Messages shown before and after the evidence message in the conversation view.
AROUND = 10
VERBS = {"approve": "Approved", "reject": "Rejected"}


@role_required(MODERATOR)
def moderation_matching(request):
    """GET: how many pending entries the filters (the query string) match, with the buttons.
    POST: approve or reject every one of them."""
    form, filters = filters_of(request)
    if request.method != "POST":
        count = entry_queue(**filters).filter(status="pending").count() if not form.errors else 0
        context = {
            "form": form,
            "count": count,
            "described": _described(form) if not form.errors else "",
            "back": _query_string(request),
        }
        return render(request, "console/moderation/matching.html", context)
    action = request.POST.get("action", "")
    if action not in VERBS:
        messages.error(request, f"action: {action!r} is not approve or reject.")
    elif form.errors:
        messages.error(request, "Fix the filters first: nothing was changed.")
    else:
        count = entries_moderate_matching(
            entries=entry_queue(**filters),
            action=action,
            actor=actor(request),
            described=_described(form),
        )
        messages.success(request, f"{VERBS[action]} {_entries(count)} matching the filters.")
    # The whole list changed: an htmx request follows the redirect and swaps the page in.
    return redirect(reverse("console:moderation") + _query_string(request))


def _described(form) -> str:
    """The filters as the moderator chose them, for the audit log: "source=…, agent=…". An end
    user's id is named only as "resource=(one end user)": forgetting them must leave no trace
    in a row that is not about them alone."""
    data = form.cleaned_data
    shown = [f"{name}={data[name]}" for name in ("source", "agent", "age") if data.get(name)]
    if data.get("resource"):
        shown.append("resource=(one end user)")
    return ", ".join(shown) or "all pending entries"


@role_required(MODERATOR)
def entry_similar_fragment(request, entry_id):
    """The fragment #similar-<id>: the entries nearest to this one, by their vectors."""
    entry = _entry(entry_id)
    if entry is None:
        raise Http404("No such memory entry: it may have been deleted.")
    context = {"entry": entry, "similar": entry_similar(entry=entry)}
    return render(request, "console/moderation/similar.html", context)


@role_required(MODERATOR)
def entry_conversation(request, entry_id):
    """The messages around an entry's evidence message, read-only, the evidence marked."""
    entry = _entry(entry_id)
    if entry is None:
        raise Http404("No such memory entry: it may have been deleted.")
    context = {"entry": entry, "lines": [], "around": AROUND, "back": _query_string(request)}
    if entry.message is not None:  # else the page says the entry names no message
        rows = messages_around(
            thread=entry.message.thread_id, seqs=[entry.message.seq], before=AROUND, after=AROUND
        )
        context.update(lines=_lines(entry, rows), first_seq=min(rows), last_seq=max(rows))
    return render(request, "console/moderation/conversation.html", context)


def _lines(entry, rows: dict) -> list[dict]:
    """The messages by seq as the page lists them, the evidence marked in its own."""
    lines = []
    for seq in sorted(rows):
        row, is_evidence = rows[seq], seq == entry.message.seq
        html = (
            evidence_in_source(entry, whole=True)[0]
            if is_evidence
            else format_html("{}", row.content)
        )
        lines.append({"seq": seq, "row": row, "html": html, "is_evidence": is_evidence})
    return lines


urlpatterns = [
    path("moderation/matching/", moderation_matching, name="moderation-matching"),
    path("moderation/<uuid:entry_id>/similar/", entry_similar_fragment, name="moderation-similar"),
    path(
        "moderation/<uuid:entry_id>/conversation/",
        entry_conversation,
        name="moderation-conversation",
    ),
]
