"""Consolidation without a model: keep what the messages plainly state, skip the trivia.

Conservative by design: a rule that cannot tell whether something matters leaves it out, so the
fallback stores fewer entries than a model would, never noise. What it keeps:
  - the user's statements (sentences that are not questions, of three words or more);
  - errors: error messages, and tool results that report a failure (threads.outcome decides);
  - the assistant's decisions and outcomes (sentences with a decision or outcome verb).
What it skips: acknowledgements and greetings ("ok", "thanks", "got it", "hi"), questions,
system messages, tool calls, events, and tool results that only acknowledge.
"""

import re
from dataclasses import dataclass

from apps.core.sentences import sentences
from apps.threads.outcome import message_outcome

VERSION = "consolidation-extractive-1"

_WORD = re.compile(r"[\w'’-]+", re.UNICODE)
_SPACE = re.compile(r"\s+")
# Words that make up acknowledgements and greetings; a short message of these alone is trivia.
_TRIVIA_WORDS = frozenset(
    """ok okay k kk thanks thank thx ty you u got it sure yes yeah yep yup no nope cool great
    nice fine good hi hello hey there morning afternoon evening night bye goodbye cheers alright
    all right sounds perfect awesome np problem welcome lol haha understood noted will do see
    ya later much so very really just a lot lots appreciate appreciated that's thats wonderful
    excellent""".split()
)
_TRIVIA_MAX_WORDS = 6
# Which sentences of a failed tool result to quote; whether it failed is threads.outcome's call
# (a status number alone is not a reason: "489.00 EUR" is no error).
_ERROR = re.compile(
    r"\b(error|exception|traceback|failed|failure|denied|refused|timed? ?out|"
    r"not found|unauthori[sz]ed|forbidden|invalid)\b",
    re.IGNORECASE,
)
_OUTCOME = re.compile(
    r"\b(decided|decision|agreed|chose|chosen|will use|we'll use|switched to|fixed|resolved|"
    r"deployed|released|shipped|created|completed|finished|merged|migrated|installed|"
    r"succeeded|failed|broke|rolled back)\b",
    re.IGNORECASE,
)
_MIN_STATEMENT_WORDS = 3


@dataclass(frozen=True)
class Kept:
    """What the fallback keeps of one message: the entry's text and a verbatim quote of it."""

    content: str
    evidence: str


def is_trivia(text: str) -> bool:
    """Whether text is only an acknowledgement or a greeting (or nothing at all)."""
    words = [word.lower() for word in _WORD.findall(text)]
    if not words:
        return True
    return len(words) <= _TRIVIA_MAX_WORDS and all(word in _TRIVIA_WORDS for word in words)


def message_keep(message) -> Kept | None:
    """Return what is worth remembering of one message, or None to skip it."""
    text = message.content or ""
    if message.kind == "error":
        return _kept("Error", _sentences(text)[:2]) if text.strip() else None
    if message.role == "tool" or message.kind == "tool_result":
        if not message_outcome(message).error:
            return None
        failing = [s for s in _sentences(text) if _ERROR.search(s)][:2] or _sentences(text)[:1]
        label = f"Error from tool {message.name}" if message.name else "Error from a tool"
        return _kept(label, failing)
    if message.kind != "message" or is_trivia(text):
        return None
    if message.role == "user":
        statements = [
            s
            for s in _sentences(text)
            if not s.rstrip().endswith("?")
            and not is_trivia(s)
            and len(_WORD.findall(s)) >= _MIN_STATEMENT_WORDS
        ]
        return _kept("The user said", statements)
    if message.role == "assistant":
        return _kept("Outcome", [s for s in _sentences(text) if _OUTCOME.search(s)][:3])
    return None  # system prompts are configuration, not memory


def _sentences(text: str) -> list[str]:
    """Return the sentences of text as verbatim slices of it, stripped: split where they end,
    never inside a decimal, a version, a URL, an address or after an abbreviation."""
    return sentences(text)


def _kept(label: str, sentences: list[str]) -> Kept | None:
    if not sentences:
        return None
    body = _SPACE.sub(" ", " ".join(sentences)).strip()
    # The first kept sentence is a slice of the message, so it quotes the message verbatim.
    return Kept(content=f"{label}: {body}", evidence=sentences[0])


def cap_at_sentence(text: str, limit: int) -> str:
    """Return text cut to at most limit characters, at the last sentence end that fits."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    end = max(head.rfind(". "), head.rfind("! "), head.rfind("? "))
    if end >= limit // 2:
        return head[: end + 1]
    cut = head[: limit - 1].rsplit(" ", 1)[0]
    return cut + "…"
