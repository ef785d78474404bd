"""Console pages: what an agent saw in a context it was given, and a thread's contexts."""

import json

from django.http import Http404
from django.shortcuts import render
from django.urls import path, reverse

from apps.console.pages import paginate, query_without_page
from apps.console.roles import OPERATOR, role_required
from apps.context.selectors import chunk_documents, snapshot_for_operator, snapshot_previous
from apps.context.snapshots import snapshot_diff, snapshot_list, snapshot_replay
from apps.core.errors import NotFound
from apps.threads.selectors import thread_for_operator


@role_required(OPERATOR)
def context_detail(request, context_id):
    """A context as re-rendered from its rows: blocks, items linked to their sources, a diff."""
    snapshot = _found(snapshot_for_operator, context_id=context_id)
    replay = snapshot_replay(snapshot=snapshot)
    previous = snapshot_previous(snapshot=snapshot)
    diff = snapshot_diff(first=previous, second=snapshot) if previous else None
    items = [item for block in replay["blocks"] for item in block["items"]]
    if diff:
        items += diff["entered"] + diff["left"] + diff["changed"]
    _link_sources(snapshot.thread, items)
    context = {
        "snapshot": snapshot,
        "thread": snapshot.thread,
        "replay": replay,
        "budget": budget_bars(replay),
        "sent_messages": json.dumps(replay["messages"], ensure_ascii=False, indent=1),
        "previous": previous,
        "diff": diff,
    }
    return render(request, "console/contexts/detail.html", context)


BAR_WIDTH = 1000  # the SVG's user units across max_tokens


def budget_bars(replay: dict) -> list[dict]:
    """Each block's used and planned tokens as spans of a bar across max_tokens, side by side in
    the blocks' order (SVG coordinates: the page's CSP allows no inline styles)."""
    scale = BAR_WIDTH / max(replay["max_tokens"], 1)
    bars, used_x, planned_x = [], 0.0, 0.0
    for block in replay["blocks"]:
        planned = block.get("planned_tokens") or 0
        bars.append(
            {
                "name": block["name"],
                "tokens": block["tokens"],
                "planned": block.get("planned_tokens"),
                "granted": block.get("granted_tokens"),
                "x": round(used_x, 1),
                "width": round(block["tokens"] * scale, 1),
                "planned_x": round(planned_x, 1),
                "planned_width": round(planned * scale, 1),
            }
        )
        used_x += block["tokens"] * scale
        planned_x += planned * scale
    return bars


@role_required(OPERATOR)
def thread_contexts(request, thread_id):
    """Every context given for a thread, newest first."""
    thread = _found(thread_for_operator, thread_id=thread_id)
    context = {
        "thread": thread,
        "page": paginate(request, snapshot_list(thread=thread)),
        "query": query_without_page(request),
    }
    return render(request, "console/contexts/list.html", context)


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
]
