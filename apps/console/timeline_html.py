"""The timeline's rows as HTML: tool steps, messages, run edges and code blocks; and the runs
listed beside the timeline, linked to their place in it.

Rendered here, not by templates, for speed: on the bench's page (bench/console_render.py, 100
tool-loop messages, 50 runs in the sidebar) the row templates (_step, _message,
_message_header, _run and _code, included per row) and the sidebar's run loop took about 70% of
the view's CPU — some 25,000 variable lookups, 300 date and 120 truncatechars filters a page —
and the same markup written out here takes a tenth of that. Every value goes through `escape`;
the rarer pieces (observation bands) are still rendered by their template.
"""

import unicodedata
from html import escape as _escape

from django.template.defaultfilters import filesizeformat, floatformat, truncatechars
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.safestring import SafeString

from apps.console.timeline import Body, Item, RunSpan
from apps.context.snapshots import manifest_items


def escape(value) -> str:
    # What the templates' autoescaping does (django.utils.html.escape is html.escape of str()),
    # without the lazy-string checks around it: this runs for every value of every row.
    return _escape(str(value))


def timeline_html(items: list[Item], highlight: int | None = None) -> SafeString:
    """The rows of the timeline: each item with the bands and run edges around it."""
    rows = []
    for item in items:
        for message in item.messages:
            for band in getattr(message, "bands", ()):
                band_html = render_to_string("console/threads/_band.html", {"band": band})
                rows.append(f'<li class="band-row">{band_html}</li>')
        rows.extend(run_edge_html(span, "start") for span in item.run_starts)
        row = step_html if item.kind == "tool" else message_html
        rows.append(row(item, highlight))
        rows.extend(run_edge_html(span, "end") for span in item.run_ends)
    return SafeString("\n" + "\n".join(rows) + "\n")


def code_html(body: Body, label: str = "Code") -> SafeString:
    """A code block with its copy button: indented JSON, or the text as it was written.

    The block scrolls, so the keyboard reaches it (tabindex) and it is named (a group with a
    label: a <pre> alone has no role that may carry one)."""
    kind = "json" if body.is_json else "text"
    return SafeString(
        '<div class="code-block"><button type="button" class="copy secondary" data-copy>Copy'
        f'</button><pre class="{kind}" tabindex="0" role="group" aria-label="{escape(label)}">'
        f"{escape(body.text)}</pre></div>\n"
    )


def step_html(item: Item, highlight: int | None) -> str:
    """A tool call and its result as one step, folded to one line: tool, status, size, latency,
    first words."""
    line = [f'<span class="tool-name">{escape(item.tool_name or "tool")}</span>']
    if item.result:
        if item.error:
            outcome = getattr(item.result, "outcome", None)  # set by timeline_items
            reason = escape(outcome.reason) if outcome else ""
            line.append(f'<span class="badge error" title="{reason}">error</span>')
        else:
            line.append('<span class="badge ok">ok</span>')
    else:
        line.append('<span class="badge">call, no result here</span>')
    if not item.call:
        line.append('<span class="badge">result, call not loaded</span>')
    line.append(f'<span class="step-size">{filesizeformat(item.size)}</span>')
    if item.latency_ms is not None:
        line.append(
            f'<span class="latency" title="from the call to its result">{item.latency_ms} ms</span>'
        )
    line.append(f'<span class="first-words">{escape(item.first_words)}</span>')
    seqs = f"#{item.first.seq}" + (f"–#{item.result.seq}" if len(item.messages) > 1 else "")
    line.append(f'<span class="step-seq">{seqs}</span>')
    line.append(context_links_html(*item.messages))
    parts = []
    for message in item.messages:
        body = [header_html(message, with_contexts=False)]
        if message.content_body:
            body.append(code_html(message.content_body, f"Content of #{message.seq}"))
        if message.payload_body:
            payload = code_html(message.payload_body, f"Payload of #{message.seq}")
            body.append('<div class="small muted">payload</div>' + payload)
        body.append(_metadata_html(message))
        parts.append(_message_div(message, highlight, "\n".join(body)))
    summary = "\n".join(line)
    return (
        f'<li class="item step{_item_classes(item)}" data-kind="tool">\n'
        f'<details class="fold step-fold"{" open" if item.open else ""}>\n'
        f'<summary class="step-line">\n{summary}\n</summary>\n'
        + "\n".join(parts)
        + "\n</details>\n</li>"
    )


def message_html(item: Item, highlight: int | None) -> str:
    """A message, an error or an event: its text, and its payload and metadata folded away."""
    message = item.first
    opened = " open" if item.open else ""
    body = [header_html(message)]
    content = message.content_body
    if content and content.is_json:
        body.append(
            f'<details class="fold"{opened}><summary><span class="badge">JSON</span> '
            f"{filesizeformat(content.size)} · "
            f'<span class="first-words">{escape(message.first_words)}</span></summary>'
            f"{code_html(content, f'Content of #{message.seq}')}</details>"
        )
    elif message.long:
        body.append(
            f'<details class="fold"{opened}><summary class="first-words">'
            f"{escape(message.first_words)} "
            f'<span class="muted">({filesizeformat(content.size)})</span></summary>'
            f'<div class="content">{escape(message.content)}</div></details>'
        )
    elif message.content:
        body.append(f'<div class="content">{escape(message.content)}</div>')
    if message.payload_body:
        body.append(
            f'<details class="fold"><summary>Payload · {filesizeformat(message.payload_body.size)}'
            f"</summary>{code_html(message.payload_body, f'Payload of #{message.seq}')}</details>"
        )
    body.append(_metadata_html(message))
    div = _message_div(message, highlight, "\n".join(body))
    return f'<li class="item{_item_classes(item)}" data-kind="{escape(item.kind)}">\n{div}\n</li>'


def header_html(message, *, with_contexts: bool = True) -> str:
    """A message's seq (a link to it), role, kind, tool, actor, tokens, time and the contexts
    given around its turn (a tool step shows those on its folded line instead)."""
    seq = message.seq
    what = escape(message.role)
    if message.kind != "message":
        what += f" · {escape(message.kind)}"
    if message.name:
        what += f" · {escape(message.name)}"
    parts = [f'<a href="?seq={seq}#m-{seq}">#{seq}</a>', f"<span>{what}</span>"]
    if message.actor:
        parts.append(f"<span>{escape(message.actor)}</span>")
    parts.append(f"<span>{message.token_count} tokens</span>")
    parts.append(time_html(message.created_at))
    if with_contexts:
        parts.append(context_links_html(message))
    return "<header>\n" + "\n".join(parts) + "\n</header>\n"


def context_links_html(*messages) -> str:
    """Links to the contexts placed at these messages (snapshots_by_turn), each labelled by when
    it was assembled: before the message (the agent took this turn with it) or after it (a
    context that already holds the message, as one asked after the newest message does)."""
    links = []
    for message in messages:
        for snapshot in getattr(message, "contexts", ()):
            url = escape(reverse("console:context", args=[snapshot.id]))
            tokens = floatformat(snapshot.tokens, "g")
            when = (
                f"context given after #{message.seq}"
                if context_holds(snapshot, message)
                else "context given before this turn"
            )
            links.append(f'<a class="context-link" href="{url}">{when} ({tokens} tokens)</a>')
    return "".join(links)


def context_holds(snapshot, message) -> bool:
    """Whether a context was assembled after message: its recent block holds the message, or,
    with no recent messages in it, it was assembled later than the message was stored."""
    recent = [
        item["seq"]
        for block in snapshot.manifest.get("blocks", ())
        if block["name"] == "recent"
        for item in manifest_items(block)
        if item["type"] == "message"
    ]
    if recent:
        return message.seq in recent
    return snapshot.assembled_at > message.created_at


def run_edge_html(span: RunSpan, edge: str) -> str:
    """A run's first or last message: the rail between them is drawn beside the run's items."""
    run = span.run
    start = edge == "start"
    name = escape(truncate(run.name or run.id, 40))
    line = [
        f"<strong>{'Run' if start else 'End of run'} {name}</strong>",
        f'<span class="badge {escape(run.status)}">{escape(run.status)}</span>',
        f"<span>#{span.first_seq}–#{span.last_seq}</span>",
    ]
    if start:
        line.append(f"<span>started {time_html(run.created_at)}</span>")
    if run.finished_at:
        finished = time_html(run.finished_at, "%H:%M:%S")
        line.append(f"<span>finished {finished} after {escape(span.duration)}</span>")
    elif not start:
        line.append("<span>still running</span>")
    parts = ['<div class="run-line">\n' + "\n".join(line) + "\n</div>"]
    if run.summary:
        parts.append(f'<div class="run-summary">{escape(run.summary)}</div>')
    if run.error:
        parts.append(f'<div class="run-error" role="note">{escape(run.error)}</div>')
    artifacts = getattr(span, "artifacts", None)
    if not start and artifacts:
        rows = "\n".join(
            f'<li><a href="{escape(reverse("console:artifact", args=[artifact.id]))}" download>'
            f'{escape(artifact.name)}</a> <span class="badge">{escape(artifact.kind)}</span> '
            f"<span>{filesizeformat(artifact.size_bytes)}</span></li>"
            for artifact in artifacts
        )
        parts.append(f'<ul class="run-artifacts" aria-label="Artifacts of the run">\n{rows}\n</ul>')
    edge_class = "run-band" if start else "run-end"
    anchor = f' id="run-{run.id}"' if start else ""
    body = "\n".join(parts)
    return f'<li class="{edge_class} run-{escape(run.status)}"{anchor}>\n{body}\n</li>'


def sidebar_runs_html(runs: list) -> SafeString:
    """The runs beside the timeline: name (a link to the run's first message), status, duration,
    start, messages, summary and error. Each run needs first_seq, last_seq and duration set."""
    rows = []
    for run in runs:
        name = escape(truncate(run.name or run.id, 30))
        if run.first_seq:
            name = f'<a href="?seq={run.first_seq}#run-{run.id}">{name}</a>'
            where = f"#{run.first_seq}–#{run.last_seq}"
        else:
            where = "no messages"
        status = escape(run.status)
        row = f'<p class="run-entry">{name} <span class="badge {status}">{status}</span>'
        if run.duration:
            row += f" · {escape(run.duration)}"
        started = timezone.localtime(run.created_at)
        row += (
            f'<br><span class="muted small">{started:%Y-%m-%d %H:%M:%S} '
            f"{escape(started.tzname())} · {where}</span>"
        )
        if run.summary:
            row += f'<br><span class="small">{escape(truncate(run.summary, 120))}</span>'
        if run.error:
            row += f'<br><span class="error small">{escape(truncate(run.error, 160))}</span>'
        rows.append(row + "</p>")
    return SafeString("\n".join(rows))


def truncate(value, length: int) -> str:
    """What the truncatechars filter shows, without its cost for the text that fits: it
    normalizes the text (NFC) and cuts it only when longer than `length` characters."""
    text = unicodedata.normalize("NFC", str(value))
    return text if len(text) <= length else truncatechars(text, length)


def time_html(value, time_format: str = "%Y-%m-%d %H:%M:%S") -> str:
    """A <time> in the current time zone, with the zone's name (what the `date` filter with
    "Y-m-d H:i:s T" shows, without parsing its format string for each of the page's 300 times)."""
    local = timezone.localtime(value)
    return (
        f'<time datetime="{local.isoformat()}">'
        f"{local.strftime(time_format)} {escape(local.tzname())}</time>"
    )


def _item_classes(item: Item) -> str:
    classes = " is-error" if item.error else ""
    if item.run:
        classes += f" in-run run-{escape(item.run.run.status)}"
    return classes


def _message_div(message, highlight: int | None, body: str) -> str:
    classes = f"msg {escape(message.role)} {escape(message.kind)}"
    current = ""
    if message.seq == highlight:
        classes += " highlight"
        current = ' aria-current="true"'
    return f'<div class="{classes}" id="m-{message.seq}"{current}>\n{body}\n</div>'


def _metadata_html(message) -> str:
    if not message.metadata_body:
        return ""
    return (
        '<details class="fold"><summary>Metadata</summary>'
        f"{code_html(message.metadata_body, f'Metadata of #{message.seq}')}</details>"
    )
