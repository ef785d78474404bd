"""Deterministic observations, reflections and summaries, for when no model is configured or fails.

A message log becomes one line per step:
  user requests, errors and decisions verbatim;
  a tool call and its result as `name(argument digest) → outcome`, with the identifiers the
  result held (ids, URLs, file names, numbers), paired by tool_call_id or adjacency
  (threads.tool_pairing) and judged by threads.outcome;
  the same step repeated in a row as one line marked ×n.
Long argument values and texts are cut as prose, at a word boundary, never inside an identifier,
URL, number, date or path; the identifiers of the part cut off follow it in brackets, and an
error text is kept whole. Every line starts with the seq range it came from, so the text can be
traced back.
"""

import json
import re
from dataclasses import dataclass

from apps.observations.statements import statement_parts
from apps.threads.outcome import message_outcome, text_outcome
from apps.threads.tool_pairing import answered_call_id, answers_a_call, answers_adjacent, call_id

PROMPT_VERSION = "extractive-1"

_VALUE_CHARS = 40  # the prose of an argument value in a digest
_TEXT_CHARS = 300  # an event, or a message that is not conversation
# The prose kept of a conversational message's statements: the user's each, the other side's
# first sentence, cut (the agent's replies are long and are recalled whole when a question
# needs them; the facts of what is cut follow in brackets). 50 characters hold a reply's gist
# ("Press Q anywhere in the app to open quick add"); at 60 a conversation's observations were
# 2.9x smaller than its messages, at 50 3.1x (bench/memory_fidelity.py).
_STATEMENT_CHARS = 100
_REPLY_CHARS = 50
# A pause longer than this starts a new session: its first line says when it was.
_SESSION_GAP_SECONDS = 30 * 60
_VERBATIM_CHARS = 4000  # a user request or error: kept whole unless enormous
_RESULT_IDS = 10  # identifiers quoted from one tool result

_URL = r"https?://[^\s\"'<>)\]},]+"
_EXTENSIONS = (
    "py|js|ts|tsx|jsx|json|jsonl|ya?ml|toml|ini|cfg|conf|env|md|txt|csv|tsv|log|html?|css|sql|"
    "xml|sh|go|rs|java|kt|rb|php|c|h|cpp|hpp|cs|swift|pdf|png|jpe?g|gif|svg|zip|gz|tar|tgz|"
    "docx?|xlsx?|pptx?|lock|pem|crt|key|bin|parquet|ipynb"
)
_FILE = rf"(?:[\w.-]+/)*[\w-]+\.(?:{_EXTENSIONS})\b"
_UUID = r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
# Tokens mixing letters and digits: joined by - or _ (wf-123, call_9f2) or long (a1b2c3d4).
_ID = (
    r"\b(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)+\b"
    r"|\b(?=[A-Za-z]*\d)(?=\d*[A-Za-z])[A-Za-z0-9]{6,}\b"
)
# Numbers of two digits or more (status codes, counts, ids), but not a repeat mark like ×12.
_NUMBER = r"(?<![\w.×])\d{2,}(?:\.\d+)?(?![\w])"
IDENTIFIER = re.compile("|".join(f"(?:{p})" for p in (_URL, _UUID, _FILE, _ID, _NUMBER)))
_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.?"
_DATE = (
    r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
    rf"|\b\d{{1,2}}\s+{_MONTH}\s+\d{{4}}\b|\b{_MONTH}\s+\d{{1,2}}(?:,?\s+\d{{4}})?\b"
    r"|\b\d{1,2}:\d{2}(?::\d{2})?\b"
)
# Dates and times, which identifiers_in() passes over whole: read as numbers, "2026-03-05" was
# quoted as 2026, 03, 05.
_DATE_OR_TIME = re.compile(_DATE)
_PATH = r"(?:~|\.{1,2})?/[\w.@~-]+(?:/[\w.@~-]+)*/?|\b[A-Za-z]:\\[^\s\"',]+"
_ANY_NUMBER = r"(?<![\w.])\d{1,3}(?:,\d{3})+(?:\.\d+)?|(?<![\w.])\d+(?:\.\d+)+"
# What a cut never splits: identifiers, dates and times, paths, numbers with separators.
_WHOLE = re.compile(
    "|".join(f"(?:{p})" for p in (_URL, _DATE, _PATH, _ANY_NUMBER, IDENTIFIER.pattern))
)
# Where prose may be cut: between words, or after a comma.
_BOUNDARY = re.compile(r"[\s,]+")
# The seq references a digest line starts with, without brackets: #12, #12–13, #4–5, 9–10, and
# for a line repeated many times #1–2, 40–41, 3 more, 290 (condense.joined_refs).
SEQ_REFS = r"#[\d–, #]+(?: more[\d–, #]*)*"
_SEQ_REF = re.compile(rf"^\[{SEQ_REFS}\] ", re.MULTILINE)
# The date and time a session's first line gives after its reference: (2024-02-05 08:00).
_SESSION_DATE = re.compile(
    rf"^(\[{SEQ_REFS}\] )" r"\(\d{4}-\d{2}-\d{2} \d{2}:\d{2}\) ", re.MULTILINE
)
_ERROR_WORDS = re.compile(
    r"\b(error|exception|traceback|failed|failure|timed? ?out|refused|denied|too many requests|"
    r"unavailable|rate.?limit)",
    re.IGNORECASE,
)

# A line that records a decision: what was chosen, agreed or ruled out.
_DECISION_WORDS = re.compile(
    r"\b(decided|decision|decides|chose|chosen|choose|agreed|settled on|going with|will use|"
    r"instead of|ruled out)\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[^\W_]{4,}")
# A kept line may be reworded: its words are compared by their first letters ("failed" and
# "failure" agree), and half of them must be there.
_STEM_CHARS = 5
_KEPT_SHARE = 0.5


@dataclass(frozen=True)
class Step:
    """One line of a digest: what happened at seqs, rendered without its seq reference."""

    seqs: tuple[int, ...]
    text: str
    count: int = 1  # how many times the step ran in a row


def identifiers_in(text: str) -> set[str]:
    """Return the ids, URLs, file names and numbers (two digits or more) that text names,
    each whole; the digits of a date or a time are none of them.

    The seq references digest lines start with, and the session dates after them, are this
    module's own, not identifiers.
    """
    text = _DATE_OR_TIME.sub(" ", _SEQ_REF.sub("", undated(text)))
    return {match.group(0).rstrip(".,;:") for match in IDENTIFIER.finditer(text)}


def undated(text: str) -> str:
    """Return a digest without the date and time its sessions' first lines give."""
    return _SESSION_DATE.sub(r"\1", text)


def essentials_dropped(sources: str, text: str) -> list[str]:
    """Return the error lines and decisions of sources that text does not hold in substance.

    A line is held when half of its words (four letters or more, compared by their first five
    letters, so that a rewording keeps it) occur in text; identifiers are checked on their own
    by identifiers_in().
    """
    held = {word[:_STEM_CHARS] for word in _WORD.findall(text.lower())}
    dropped = []
    for line in _SEQ_REF.sub("", sources).splitlines():
        if not (_ERROR_WORDS.search(line) or _DECISION_WORDS.search(line)):
            continue
        words = {word[:_STEM_CHARS] for word in _WORD.findall(line.lower())}
        if words and len(words & held) < _KEPT_SHARE * len(words):
            dropped.append(line.strip())
    return dropped


def messages_digest(messages) -> str:
    """Return the extractive digest of messages (in seq order): one line per step, the first
    of each session (after a pause of _SESSION_GAP_SECONDS) with its date and time."""
    steps = _collapse([step for step in _steps(messages) if step is not None])
    times = {message.seq: getattr(message, "created_at", None) for message in messages}
    lines, previous = [], None
    for step in steps:
        moment = times.get(min(step.seqs))
        dated = moment is not None and (
            previous is None or (moment - previous).total_seconds() > _SESSION_GAP_SECONDS
        )
        lines.append(_line(step, moment.strftime("%Y-%m-%d %H:%M") if dated else None))
        previous = moment or previous
    if not lines and messages:  # small talk only: say so, rather than nothing
        step = Step(tuple(message.seq for message in messages), "nothing to remember")
        return _line(step)
    return "\n".join(lines)


def observations_merge(texts: list[str]) -> str:
    """Concatenate digests, merging entries that repeat one another; nothing else is dropped.

    An entry is a line with its seq reference and the lines that continue it (a multi-line
    error); the same entry seen again adds its reference to the first one.
    """
    merged: dict[str, list[str]] = {}
    for text in texts:
        for entry in _entries(text):
            ref = _SEQ_REF.match(entry)
            body = entry[ref.end() :] if ref else entry
            refs = merged.setdefault(body, [])
            if ref:
                refs.append(ref.group(0)[1:-2])
    return "\n".join(
        f"[{', '.join(refs)}] {body}" if refs else body for body, refs in merged.items()
    )


def _entries(text: str) -> list[str]:
    entries: list[str] = []
    for line in text.splitlines():
        if entries and not _SEQ_REF.match(line):
            entries[-1] += "\n" + line
        else:
            entries.append(line)
    return entries


def _steps(messages):
    """Yield the steps of messages: each call with the result that answers it, else alone.

    1. A call waits for its result; a result answers the waiting call its tool_call_id names,
       else the call just before it (same tool), as the timeline pairs them.
    2. Calls without an id stop waiting at the next call; every waiting call stops at a message
       that answers none ("(no result)") and at the end ("(pending)").
    """
    waiting: list = []  # calls in order, not answered yet
    previous = None
    for message in messages:
        if message.kind == "tool_call":
            for call in [call for call in waiting if not call_id(call)]:
                waiting.remove(call)
                yield Step((call.seq,), f"{_call(call)} → (no result)")
            waiting.append(message)
        else:
            call = _answered(message, waiting, previous) if answers_a_call(message) else None
            if call is not None:
                waiting.remove(call)
                yield _result_step(message, call)
            else:
                for call in waiting:
                    yield Step((call.seq,), f"{_call(call)} → (no result)")
                waiting = []
                yield _message_step(message)
        previous = message
    for call in waiting:
        yield Step((call.seq,), f"{_call(call)} → (pending)")


def _answered(result, waiting: list, previous):
    """The waiting call result answers: by tool_call_id, else the call just before it."""
    answered = answered_call_id(result)
    for call in waiting:
        if answered and call_id(call) == answered:
            return call
    if previous is not None and previous in waiting and answers_adjacent(result, previous):
        return previous
    return None


def _message_step(message) -> Step:
    seqs = (message.seq,)
    if message.kind == "tool_result":  # a result with no call before it
        return _result_step(message, None)
    if message_outcome(message).error:
        label = f"Error ({message.name})" if message.name else "Error"
        return Step(seqs, f"{label}: {_verbatim(message.content or _json(message.payload))}")
    if message.kind == "event":
        return Step(seqs, f"Event {message.name}: {_cut(message.content, _TEXT_CHARS)}".strip())
    who = message.name or message.role.capitalize()
    if message.kind == "message" and message.content:
        return _said(message, seqs, who)
    if message.role == "user":
        return Step(seqs, f"{who}: {_verbatim(message.content or _json(message.payload))}")
    return Step(seqs, f"{who}: {_cut(message.content or _json(message.payload), _TEXT_CHARS)}")


def _said(message, seqs, who: str) -> Step | None:
    """A conversational message as its requests verbatim and its informative statements cut
    short (statements.py); None when it held only small talk. Its payload, if any, follows."""
    user = message.role == "user"
    parts = statement_parts(message.content, requests=user, facts=_facts)
    kept = [text if kind == "request" else _cut(text, _STATEMENT_CHARS) for kind, text in parts]
    if not user and parts:  # the first statement, cut, then the facts of the rest
        first = " ".join(parts[0][1].split())
        limit = min(_REPLY_CHARS, len(first) + 1)  # + 1: the space after it is a boundary
        kept = [_cut(" ".join(text for _, text in parts), limit)]
    if message.payload is not None:
        kept.append(_cut(_json(message.payload), _TEXT_CHARS))
    if not kept:
        return None
    return Step(seqs, f"{who}: {' '.join(kept)}")


def _facts(text: str) -> list[str]:
    """The identifiers, numbers, dates, paths and URLs text holds (what a cut keeps)."""
    return _WHOLE.findall(text)


def _result_step(result, call) -> Step:
    seqs = (call.seq, result.seq) if call is not None else (result.seq,)
    head = _call(call) if call is not None else f"{result.name or 'tool'} result"
    text = result.content or _json(result.payload)
    if message_outcome(result).error:
        return Step(seqs, f"{head} → error: {_verbatim(text)}")
    # Names before bare numbers, in order of appearance; what the call says is not repeated.
    found = identifiers_in(text) - identifiers_in(head)
    ids = sorted(found, key=lambda token: (_is_number(token), text.find(token)))[:_RESULT_IDS]
    return Step(seqs, f"{head} → ok" + (f"; {', '.join(ids)}" if ids else ""))


def _is_number(token: str) -> bool:
    return token.replace(".", "", 1).isdigit()


def _call(call) -> str:
    arguments = call.payload if call.payload is not None else _maybe_json(call.content)
    if isinstance(arguments, dict) and isinstance(arguments.get("arguments"), (dict, str)):
        arguments = arguments["arguments"]
    if isinstance(arguments, str):
        arguments = _maybe_json(arguments)
    if isinstance(arguments, dict):
        pairs = [f"{key}={_cut(_scalar(value), _VALUE_CHARS)}" for key, value in arguments.items()]
        digest = ", ".join(pairs)
    else:
        digest = _cut(_scalar(arguments), _VALUE_CHARS) if arguments not in (None, "") else ""
    # Not cut as a whole: each value is, and a whole cut would drop the last arguments.
    return f"{call.name or 'tool'}({digest})"


def _collapse(steps: list[Step]) -> list[Step]:
    """Merge runs of the same step (a retry loop) into one, keeping every seq."""
    out: list[Step] = []
    for step in steps:
        if out and out[-1].text == step.text:
            out[-1] = Step(out[-1].seqs + step.seqs, step.text, out[-1].count + step.count)
        else:
            out.append(step)
    return out


def _line(step: Step, when: str | None = None) -> str:
    first, last = min(step.seqs), max(step.seqs)
    ref = f"#{first}" if first == last else f"#{first}–{last}"
    times = f" ×{step.count}" if step.count > 1 else ""
    dated = f"({when}) " if when else ""
    return f"[{ref}] {dated}{step.text}{times}"


def _scalar(value) -> str:
    if isinstance(value, str):
        return value
    return _json(value)


def _json(value) -> str:
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _maybe_json(text):
    if not isinstance(text, str) or not text.strip().startswith(("{", "[")):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def _cut(text: str, limit: int) -> str:
    """Return text on one line, its prose cut to about limit characters, its facts kept.

    1. Text within limit, or an error text (threads.outcome), is kept whole.
    2. Otherwise cut at the last word boundary within limit, moved past an identifier, URL,
       number, date or path that starts within limit; a first word longer than limit is kept
       whole.
    3. The identifiers of the part cut off follow "…" in brackets, so none is lost.
    """
    flat = " ".join(str(text).split())
    if len(flat) <= limit:
        return flat
    if text_outcome(flat).error:
        return _verbatim(flat)
    boundaries = [match.start() for match in _BOUNDARY.finditer(flat) if match.start() > 0]
    within = [position for position in boundaries if position < limit]
    cut = within[-1] if within else (boundaries[0] if boundaries else len(flat))
    for match in _WHOLE.finditer(flat):
        if match.start() >= max(cut, limit):
            break
        cut = max(cut, match.end())
    if cut >= len(flat):
        return flat
    head = flat[:cut].rstrip(" ,")
    facts = dict.fromkeys(
        token.rstrip(".,;:")
        for token in (match.group(0) for match in _WHOLE.finditer(flat, cut))
        if token.rstrip(".,;:") not in head
    )
    return f"{head} …" + (f"[{' '.join(facts)}]" if facts else "")


def _verbatim(text: str) -> str:
    text = text.strip()
    return text if len(text) <= _VERBATIM_CHARS else text[:_VERBATIM_CHARS] + "…"
