"""Console pages: what an agent saw in a context it was given, and a thread's contexts."""

import json
import uuid

from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import path, reverse

from apps.console.context_picture import block_deltas, picture_blocks
from apps.console.pages import paginate, query_without_page
from apps.console.roles import OPERATOR, role_required
from apps.context.left_out import snapshot_left_out
from apps.context.selectors import chunk_documents, snapshot_for_operator, snapshot_previous
from apps.context.snapshots import snapshot_diff, snapshot_list, snapshot_replay
from apps.core.errors import NotFound
from apps.observations.selectors import observations_by_id, summaries_by_id
from apps.threads.selectors import thread_for_operator

# Contexts offered in the compare form's selects, newest first.
COMPARE_CHOICES = 200


@role_required(OPERATOR)
def context_detail(request, context_id):
    """A context as re-rendered from its rows: the budget as a bar, each block as ranges of
    items, what the budget cut, and a comparison with another context of the thread
    (?against=<id>, by default the one before it)."""
    snapshot = _found(snapshot_for_operator, context_id=context_id)
    replay = snapshot_replay(snapshot=snapshot)
    against = _against(request, snapshot)
    diff = deltas = None
    if against is not None:
        diff = snapshot_diff(first=against, second=snapshot)
        deltas = block_deltas(snapshot_replay(snapshot=against), replay, diff)
    left_out = snapshot_left_out(snapshot=snapshot)
    shown = items_of(replay)
    # Items whose row changed or went since: their text on this page is today's.
    changed_since = sum(1 for item in shown if item.get("changed") or item.get("deleted"))
    items = [*shown]
    items += [item for cut in (left_out or {}).values() for item in cut["items"]]
    if diff:
        items += diff["entered"] + diff["left"] + diff["changed"]
    _link_sources(snapshot.thread, items)
    picture_blocks(replay, left_out, deltas, _spans(snapshot.thread, items))
    context = {
        "snapshot": snapshot,
        "thread": snapshot.thread,
        "replay": replay,
        "budget": budget_bars(replay, snapshot.manifest.get("budget", {})),
        "changed_since": changed_since,
        "sent_messages": json.dumps(replay["messages"], ensure_ascii=False, indent=1),
        "left_out_recorded": left_out is not None,
        "against": against,
        "is_previous": against is not None and against == snapshot_previous(snapshot=snapshot),
        "diff": diff,
        "deltas": deltas,
        "choices": _choices(snapshot.thread),
    }
    return render(request, "console/contexts/detail.html", context)


def _against(request, snapshot):
    """The context to compare with: ?against=<id> of the same thread, else the previous one;
    a bad value is told and the previous one used."""
    raw = request.GET.get("against", "")
    if not raw:
        return snapshot_previous(snapshot=snapshot)
    try:
        other = snapshot_for_operator(context_id=uuid.UUID(raw))
    except (ValueError, NotFound):
        other = None
    if other is None or other.thread_id != snapshot.thread_id:
        messages.error(
            request,
            f"against: {raw[:60]!r} is not a context of this thread; compared with the "
            "previous one instead.",
        )
        return snapshot_previous(snapshot=snapshot)
    if other.pk == snapshot.pk:
        messages.error(request, "against: that is this context; pick another one to compare.")
        return snapshot_previous(snapshot=snapshot)
    return other


def _choices(thread) -> list:
    return list(
        snapshot_list(thread=thread).only("id", "assembled_at", "query", "tokens")[:COMPARE_CHOICES]
    )


@role_required(OPERATOR)
def contexts_compare(request, thread_id):
    """The compare form's target: ?a=<id>&b=<id> opens b's page compared against a."""
    thread = _found(thread_for_operator, thread_id=thread_id)
    first, second = request.GET.get("a", ""), request.GET.get("b", "")
    known = {str(pk) for pk in snapshot_list(thread=thread).values_list("id", flat=True)}
    if first in known and second in known and first != second:
        url = reverse("console:context", args=[second])
        return redirect(f"{url}?against={first}#context-diff")
    if first or second:
        messages.error(request, "a, b: pick two different contexts of this thread to compare.")
    # Nothing picked yet (or a bad pick, told above): the list with the form again.
    return _contexts_page(request, thread, status=400 if first or second else 200)


BAR_WIDTH = 1000  # the SVG's user units across max_tokens


def items_of(replay: dict) -> list[dict]:
    return [item for block in replay["blocks"] for item in block["items"]]


def budget_bars(replay: dict, given: dict) -> list[dict]:
    """Each block's used and planned tokens as spans of a bar across max_tokens, side by side in
    the blocks' order (SVG coordinates: the page's CSP allows no inline styles).

    Used is what the block held when it was given (given: the stored budget), not the tokens
    of its rows re-rendered today: a profile edited since read "used 25 of 24 granted".
    Contexts stored before the budget was recorded show the re-rendered count.
    """
    scale = BAR_WIDTH / max(replay["max_tokens"], 1)
    bars, used_x, planned_x = [], 0.0, 0.0
    for block in replay["blocks"]:
        planned = block.get("planned_tokens") or 0
        tokens = given.get(block["name"], {}).get("used", block["tokens"])
        bars.append(
            {
                "name": block["name"],
                "tokens": tokens,
                "planned": block.get("planned_tokens"),
                "granted": block.get("granted_tokens"),
                "x": round(used_x, 1),
                "width": round(tokens * scale, 1),
                "planned_x": round(planned_x, 1),
                "planned_width": round(planned * scale, 1),
            }
        )
        used_x += tokens * scale
        planned_x += planned * scale
    return bars


@role_required(OPERATOR)
def thread_contexts(request, thread_id):
    """Every context given for a thread, newest first, with the form that compares two."""
    return _contexts_page(request, _found(thread_for_operator, thread_id=thread_id))


def _contexts_page(request, thread, status: int = 200):
    context = {
        "thread": thread,
        "page": paginate(request, snapshot_list(thread=thread)),
        "query": query_without_page(request),
        "choices": _choices(thread),
    }
    return render(request, "console/contexts/list.html", context, status=status)


def _spans(thread, items: list[dict]) -> dict[str, tuple[int, int]]:
    """The messages each observation and summary item covers: id -> (first seq, last seq)."""
    wanted = {
        kind: {i["id"] for i in items if i["type"] == kind} for kind in ("observation", "summary")
    }
    spans = {}
    if wanted["observation"]:
        for key, row in observations_by_id(thread=thread, ids=wanted["observation"]).items():
            spans[key] = (row.first_seq, row.last_seq)
    if wanted["summary"]:
        for key, row in summaries_by_id(thread=thread, ids=wanted["summary"]).items():
            spans[key] = (1, row.covers_up_to_seq)
    return spans


def _link_sources(thread, items: list[dict]) -> None:
    """Give each item the URL of the console page its row is shown on, when it has one."""
    thread_url = reverse("console:thread", args=[thread.id])
    documents = chunk_documents(chunk_ids={i["id"] for i in items if i["type"] == "chunk"})
    for item in items:
        kind, key, seq = item["type"], item["id"], item["seq"]
        url = None
        if kind == "message":
            url = f"{thread_url}?seq={seq}#m-{seq}"
        elif kind == "observation":  # its seq is the first it covers; its band begins there
            url = f"{thread_url}?seq={seq}#obs-{key}"
        elif kind == "summary":  # it covers from the first message on
            url = f"{thread_url}?seq=1#summary-{key}"
        elif kind == "entry":
            url = reverse("console:moderation-entry", args=[key])
        elif kind == "chunk" and key in documents:
            url = reverse("console:knowledge-document", args=[documents[key]])
        elif kind == "note":  # a deleted note's page sends the operator back to the tree
            url = reverse("console:note", args=[key])
        # A profile or session memory has no console page; a chunk out of the index no link.
        item["url"] = url


def _found(selector, **kwargs):
    """Call a selector that raises NotFound, and answer 404 for it."""
    try:
        return selector(**kwargs)
    except NotFound as exc:
        raise Http404(exc.message) from None


urlpatterns = [
    path("contexts/<uuid:context_id>/", context_detail, name="context"),
    path("threads/<uuid:thread_id>/contexts/", thread_contexts, name="thread-contexts"),
    path("threads/<uuid:thread_id>/contexts/compare/", contexts_compare, name="contexts-compare"),
]
