"""Consolidation without a model: keep what the messages plainly state, skip the trivia.

Conservative by design: a rule that cannot tell whether something matters leaves it out, so the
fallback stores fewer entries than a model would, never noise. What it keeps:
  - the user's statements worth remembering: preferences, facts about people, places, dates,
    decisions, commitments (rules decides, sentence by sentence);
  - errors: error messages, and tool results that report a failure (threads.outcome decides),
    with the call that failed: the tool's name and its arguments, whole;
  - the assistant's own decisions and outcomes ("I deployed v2.3…", "we decided…").
What it skips: acknowledgements and greetings ("ok", "thanks", "got it", "hi"), questions and
requests, sentences under a minimum of information, system messages, tool calls, events, and
tool results that did not fail.
"""

import json
import re
from dataclasses import dataclass

from apps.core.sentences import sentences
from apps.episodic.consolidation.rules import (
    assistant_sentence_kept,
    has_minimum_information,
    user_sentence_kept,
    words,
)
from apps.threads.outcome import message_outcome

VERSION = "consolidation-extractive-2"

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
    r"not found|unauthori[sz]ed|forbidden|invalid|expired|closed)\b",
    re.IGNORECASE,
)
_ERROR_SENTENCES = 2
_OUTCOME_SENTENCES = 3
# An argument value longer than this is shown as its start and its length: ids, URLs and
# numbers are far shorter and are never cut.
_ARGUMENT_CHARS = 200


@dataclass(frozen=True)
class Kept:
    """What the fallback keeps of one message: the entry's text and a verbatim quote of it."""

    content: str
    evidence: str


def is_trivia(text: str) -> bool:
    """Whether text is only an acknowledgement or a greeting (or nothing at all)."""
    found = [word.lower() for word in words(text)]
    if not found:
        return True
    return len(found) <= _TRIVIA_MAX_WORDS and all(word in _TRIVIA_WORDS for word in found)


def message_keep(message, call=None) -> Kept | None:
    """Return what is worth remembering of one message, or None to skip it.

    call is the tool call a tool result answers, when known (threads.tool_pairing): an error
    entry then says which call failed, with its arguments.
    """
    text = message.content or ""
    if message.kind == "error":
        if not text.strip():
            return None
        return _kept(_error_label(message, call, "Error"), sentences(text)[:_ERROR_SENTENCES])
    if message.role == "tool" or message.kind == "tool_result":
        if not message_outcome(message).error:
            return None
        found = sentences(text)
        failing = [s for s in found if _ERROR.search(s)][:_ERROR_SENTENCES] or found[:1]
        return _kept(_error_label(message, call, "Error from a tool"), failing)
    if message.kind != "message" or is_trivia(text):
        return None
    if message.role == "user":
        return _kept("The user said", [s for s in sentences(text) if user_sentence_kept(s)])
    if message.role == "assistant":
        kept = [s for s in sentences(text) if assistant_sentence_kept(s)]
        return _kept("Outcome", kept[:_OUTCOME_SENTENCES])
    return None  # system prompts are configuration, not memory


def _error_label(message, call, default: str) -> str:
    if call is not None:
        return f"Error from {call_signature(call)}"
    if message.name:
        return f"Error from tool {message.name}"
    return default


def call_signature(call) -> str:
    """Return a tool call as `name(key=value, …)`: its tool and arguments, values whole."""
    arguments = _arguments(call)
    if isinstance(arguments, dict):
        shown = ", ".join(f"{key}={_value(value)}" for key, value in arguments.items())
    elif arguments in (None, "", [], {}):
        shown = ""
    else:
        shown = _value(arguments)
    return f"{call.name or 'tool'}({shown})"


def _arguments(call):
    """The call's arguments: payload.arguments (an object or its JSON), else payload, else text."""
    payload = call.payload
    if isinstance(payload, dict) and "arguments" in payload:
        payload = payload["arguments"]
    elif isinstance(payload, dict):
        payload = {k: v for k, v in payload.items() if k not in ("id", "tool_call_id", "type")}
    if payload in (None, "", {}) and call.content:
        payload = call.content
    if isinstance(payload, str) and payload.strip()[:1] in ("{", "["):
        try:
            return json.loads(payload)
        except ValueError:
            return payload
    return payload


def _value(value) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = _SPACE.sub(" ", text).strip()
    if isinstance(value, str) and (not text or " " in text or "," in text):
        text = json.dumps(text, ensure_ascii=False)
    if len(text) > _ARGUMENT_CHARS:
        return f"{text[:_ARGUMENT_CHARS]}… ({len(text)} characters)"
    return text


def _kept(label: str, kept: list[str]) -> Kept | None:
    if not kept:
        return None
    body = _SPACE.sub(" ", " ".join(kept)).strip()
    if not label.startswith("Error") and not has_minimum_information(body):
        return None
    # The first kept sentence is a slice of the message, so it quotes the message verbatim.
    return Kept(content=f"{label}: {body}", evidence=kept[0])


def cap_at_sentence(text: str, limit: int) -> str:
    """Return text cut to at most limit characters, at the last sentence end that fits."""
    if len(text) <= limit:
        return text
    head = ""
    for sentence in sentences(text):
        joined = f"{head} {sentence}".strip()
        if len(joined) > limit:
            break
        head = joined
    if len(head) >= limit // 2:
        return head
    return text[: limit - 1].rsplit(" ", 1)[0] + "…"
