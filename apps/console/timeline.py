"""The thread timeline as an operator reads an agent loop: items, tool steps and run spans.

A page of messages becomes a list of items. A tool call and its result are one item (a "step"),
paired as threads.tool_pairing says: by the `tool_call_id` the result carries, whatever its kind
(an error a tool answered pairs too), or else by adjacency: a result right after a call of the
same tool. Whether an item is an error is threads.outcome's decision, the one every list uses.
Payloads are shown as indented JSON, never as Python's repr, and long bodies are collapsed to one
line with their size and first words, so a 300-message tool loop stays a page one can scroll.

Runs are marked where they begin and where they end (their first and last message in the whole
thread, not in the page), so loading earlier or later messages never repeats a run's header.
"""

import json
import re
from dataclasses import dataclass, field
from datetime import timedelta

from django.db.models import Max, Min

from apps.threads.models import Message
from apps.threads.outcome import message_outcome
from apps.threads.tool_pairing import answered_call_id, answers_a_call, answers_adjacent, call_id

FIRST_WORDS = 120  # characters of a collapsed body shown on its one line
LONG_CONTENT = 600  # message text longer than this is collapsed to its first words


@dataclass
class Body:
    """A message's content or payload as displayed: JSON when it is JSON, else the text."""

    text: str
    is_json: bool

    @property
    def size(self) -> int:
        return len(self.text.encode())


@dataclass
class Item:
    """One row of the timeline: a message, or a tool call with its result."""

    kind: str  # message | tool | error (what the timeline's filters select)
    messages: list
    call: Message | None = None
    result: Message | None = None
    error: bool = False
    latency: timedelta | None = None
    run_starts: list = field(default_factory=list)  # RunSpan of runs whose first message is here
    run_ends: list = field(default_factory=list)

    @property
    def first(self) -> Message:
        return self.messages[0]

    @property
    def tool_name(self) -> str:
        return (self.call or self.result).name if (self.call or self.result) else ""

    @property
    def size(self) -> int:
        return sum(body.size for m in self.messages for body in m.bodies)

    @property
    def first_words(self) -> str:
        """The result's first words, its content before its payload (or the call's arguments
        when no result is loaded)."""
        for message in (self.result, self.call):
            if message is not None and message.bodies:
                return _first_words(message.bodies[0].text)
        return ""

    @property
    def latency_ms(self) -> int | None:
        return None if self.latency is None else int(self.latency.total_seconds() * 1000)

    @property
    def run(self):
        """The RunSpan of the item's first message, for the rail drawn beside a run's items."""
        return getattr(self.first, "run_span", None)


@dataclass
class RunSpan:
    """A run with the first and last message it holds in its thread."""

    run: object
    first_seq: int
    last_seq: int

    @property
    def duration(self) -> str:
        return run_duration(self.run)


def run_duration(run) -> str:
    """How long a finished run took, for people ("2.5 s", "3 min 4 s"); "" while it runs."""
    if not run.finished_at:
        return ""
    seconds = max((run.finished_at - run.created_at).total_seconds(), 0)
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, seconds = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {seconds} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


def json_text(value) -> str:
    """Indented JSON of a stored value; strings that hold JSON (tool arguments) are unpacked."""
    return json.dumps(_unpack(value), indent=2, ensure_ascii=False, default=str)


def _bodies(message) -> tuple[Body | None, Body | None]:
    """The content and the payload of a message as they are displayed (None when absent)."""
    content = payload = None
    if message.content:
        parsed = _parse_json(message.content)
        content = Body(message.content, False) if parsed is None else Body(json_text(parsed), True)
    if message.payload is not None:
        payload = Body(json_text(message.payload), True)
    return content, payload


def timeline_items(messages: list) -> list[Item]:
    """Group a page of messages (in seq order) into items, pairing calls with their results."""
    for message in messages:
        message.content_body, message.payload_body = _bodies(message)
        message.bodies = [b for b in (message.content_body, message.payload_body) if b]
        metadata = message.metadata
        message.metadata_body = Body(json_text(metadata), True) if metadata else None
        message.outcome = message_outcome(message)
        message.is_error = message.outcome.error
        message.long = len(message.content) > LONG_CONTENT
        message.first_words = _first_words(message.content)
    items: list[Item] = []
    open_calls: dict[str, Item] = {}  # tool_call_id → the step waiting for its result
    for message in messages:
        if message.kind == "tool_call":
            item = Item("tool", [message], call=message)
            items.append(item)
            if call_id(message):
                open_calls[call_id(message)] = item
        elif answers_a_call(message):
            step = _step_for(message, open_calls, items)
            if step is None and message.kind == "error":
                items.append(Item("error", [message], error=True))
            elif step is None:
                items.append(Item("tool", [message], result=message, error=message.is_error))
            else:
                step.result = message
                step.messages.append(message)
                step.error = message.is_error
                step.latency = message.created_at - step.call.created_at
        else:
            kind = "error" if message.is_error else "message"
            items.append(Item(kind, [message], error=message.is_error))
    return items


def _step_for(result, open_calls: dict, items: list[Item]) -> Item | None:
    """The step whose call this result answers: by tool_call_id, or the call just before it."""
    answered = answered_call_id(result)
    if answered:
        return open_calls.pop(answered, None)
    last = items[-1] if items else None
    if last is None or last.call is None or last.result is not None:
        return None
    return last if answers_adjacent(result, last.call) else None


def run_spans(*, run_ids) -> dict:
    """(first seq, last seq) by run id for the given runs (one grouped query).

    A run's messages are all in its thread, so the run ids alone select them, through their
    index: filtering by the thread as well led both databases to read every message of the
    thread instead. No ordering either: Message's default one (by thread) would join threads.
    """
    ids = {run_id for run_id in run_ids if run_id is not None}
    if not ids:
        return {}
    rows = (
        Message.objects.filter(run_id__in=ids)
        .order_by()
        .values("run_id")
        .annotate(first=Min("seq"), last=Max("seq"))
    )
    return {row["run_id"]: (row["first"], row["last"]) for row in rows}


def mark_runs(items: list[Item], runs_by_id: dict, bounds: dict) -> None:
    """Put each run's header on the item holding its first message, its end on its last."""
    for item in items:
        for message in item.messages:
            run = runs_by_id.get(message.run_id)
            if run is None or message.run_id not in bounds:
                continue
            first, last = bounds[message.run_id]
            span = RunSpan(run, first, last)
            message.run_span = span
            if message.seq == first:
                item.run_starts.append(span)
            if message.seq == last:
                item.run_ends.append(span)


def _parse_json(text: str):
    """The object or list a text holds as JSON, or None (plain text stays text)."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{":
        return None
    try:
        value = json.loads(stripped)
    except ValueError:
        return None
    return value if isinstance(value, dict | list) else None


def _unpack(value):
    if isinstance(value, dict):
        return {key: _unpack(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_unpack(item) for item in value]
    if isinstance(value, str):
        parsed = _parse_json(value)
        return value if parsed is None else parsed
    return value


def _first_words(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= FIRST_WORDS else flat[: FIRST_WORDS - 1] + "…"


SNIPPET_CHARS = 200


def snippet(text: str, query: str) -> list[tuple[bool, str]]:
    """About SNIPPET_CHARS of text around the first word of query it contains, split into
    (matched, part) pairs so the template can mark the query's words."""
    flat = " ".join(text.split())
    words = {word.lower() for word in re.findall(r"\w{2,}", query)}
    if not words:
        return [(False, _first_words(flat))]
    pattern = re.compile(r"\b(" + "|".join(re.escape(word) for word in words) + r")\w*", re.I)
    first = pattern.search(flat)
    start = max(0, (first.start() if first else 0) - SNIPPET_CHARS // 3)
    window = flat[start : start + SNIPPET_CHARS]
    parts: list[tuple[bool, str]] = [(False, "…")] if start else []
    position = 0
    for match in pattern.finditer(window):
        parts += [(False, window[position : match.start()]), (True, match.group(0))]
        position = match.end()
    parts.append((False, window[position:]))
    if start + SNIPPET_CHARS < len(flat):
        parts.append((False, "…"))
    return [part for part in parts if part[1]]
