"""The checks of seed 003 on what the extraction model proposes, before anything is stored.

A proposal must be a JSON object with content, one of the three transcript source labels, and
evidence found verbatim in a message of the turn from the right role; what fails is rejected
with its reason. Content over the length limit is cut at a sentence end, not refused.
"""

import re
from dataclasses import dataclass

from django.core.exceptions import ValidationError

from apps.episodic.models import LIVE_STATUSES, EntrySource, MemoryEntry
from apps.episodic.prompts import extraction as prompt
from apps.episodic.services import USER_SOURCES, normalise
from apps.threads.models import Message, Role

EXTRACTION_SOURCES = {
    EntrySource.USER_ASSERTION.value,
    EntrySource.USER_ACCEPTED_ASSISTANT_PROPOSAL.value,
    EntrySource.VERIFIED_ASSISTANT_FINDING.value,
}
_SENTENCE_END = re.compile(r"[.!?…](?=\s|$)")


@dataclass(frozen=True)
class Proposal:
    content: str
    source: str
    evidence: str
    message: Message
    supersedes: MemoryEntry | None


def proposal_check(raw, turn: list[Message], *, thread) -> Proposal | str:
    """Return the proposal checked against the turn, or why it is rejected."""
    if not isinstance(raw, dict):
        return "not a JSON object"
    content, source, evidence = raw.get("content"), raw.get("source"), raw.get("evidence")
    if not isinstance(content, str) or not normalise(content):
        return "content: missing or blank"
    if source not in EXTRACTION_SOURCES:
        return f"source: {str(source)[:60]!r} is not a source label"
    if not isinstance(evidence, str) or not evidence.strip():
        return "evidence: missing"
    roles = {Role.USER} if source in USER_SOURCES else {Role.USER, Role.ASSISTANT}
    quoted = [
        message
        for message in turn
        if message.role in roles and evidence in message.content[: prompt.MESSAGE_CHARS]
    ]
    if not quoted:
        who = "a user message" if source in USER_SOURCES else "a user or assistant message"
        return f"evidence: not found verbatim in {who} of the turn"
    return Proposal(normalise(content), source, evidence, quoted[-1], _supersedes(raw, thread))


def _supersedes(raw: dict, thread) -> MemoryEntry | None:
    """The live entry of the thread's scope that the proposal says it updates, if it is one."""
    named = raw.get("supersedes")
    if not isinstance(named, str) or not named.strip():
        return None
    try:
        return MemoryEntry.objects.filter(
            pk=named.strip(),
            agent=thread.agent,
            resource=thread.resource,
            status__in=LIVE_STATUSES,
        ).first()
    except ValidationError:  # not an entry id at all
        return None


def cap_at_sentence(text: str, limit: int) -> str:
    """Return text cut to at most limit characters, at the last sentence end that fits.

    Without a sentence end inside the allowance (one long sentence), the cut falls between words
    and is marked with an ellipsis.
    """
    if len(text) <= limit:
        return text
    ends = [match.end() for match in _SENTENCE_END.finditer(text[: limit + 1])]
    ends = [end for end in ends if end <= limit]
    if ends:
        return text[: ends[-1]].strip()
    words = text[: limit - 1].rsplit(" ", 1)[0]
    return words.rstrip(" ,;:") + "…"
