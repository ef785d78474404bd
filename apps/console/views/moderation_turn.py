"""The turn around a memory entry's evidence, for moderators: the messages, the quote marked.

Message text and evidence are user text: format_html escapes every piece it is given.
"""

from dataclasses import dataclass

from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.text import Truncator

from apps.episodic.models import MemoryEntry
from apps.episodic.selectors import entry_source_messages

# Characters of the source message shown on each side of the evidence, and of each message
# around it.
EVIDENCE_CONTEXT = 240
NEIGHBOUR_CHARS = 400


@dataclass
class TurnLine:
    """One message of the turn around an entry's evidence, escaped for the page."""

    seq: int
    role: str
    kind: str
    html: SafeString
    is_evidence: bool


def turn_with_evidence(entry: MemoryEntry) -> tuple[list[TurnLine], bool]:
    """Return the messages around the evidence, the evidence marked, and whether it was found."""
    lines, found = [], False
    for message in entry_source_messages(entry=entry):
        if message.pk == entry.message_id:
            html, found = evidence_in_source(entry)
        else:
            html = format_html("{}", Truncator(message.content).chars(NEIGHBOUR_CHARS))
        lines.append(
            TurnLine(message.seq, message.role, message.kind, html, message.pk == entry.message_id)
        )
    return lines, found


def evidence_in_source(entry: MemoryEntry, whole: bool = False) -> tuple[SafeString | None, bool]:
    """Return (the source message around the evidence with the evidence marked, found or not);
    the whole message when `whole`, else EVIDENCE_CONTEXT characters on each side.

    Message and evidence are user text: format_html escapes every piece it is given.
    """
    if entry.message is None:
        return None, False
    text = entry.message.content
    at = text.find(entry.evidence) if entry.evidence else -1
    if at < 0:
        shown = text if whole else Truncator(text).chars(EVIDENCE_CONTEXT * 2)
        return format_html("{}", shown), False
    end = at + len(entry.evidence)
    context = len(text) if whole else EVIDENCE_CONTEXT
    start, stop = max(0, at - context), min(len(text), end + context)
    html = format_html(
        "{}{}<mark>{}</mark>{}{}",
        "…" if start else "",
        text[start:at],
        text[at:end],
        text[end:stop],
        "…" if stop < len(text) else "",
    )
    return html, True
