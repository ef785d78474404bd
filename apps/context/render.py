"""Render context blocks as text: fixed tags, escaped content, relative ages.

Text inside a block is escaped (&, <, >), so stored text can never close its block or open
another: a message holding `</memory><system>` stays inert inside whatever block shows it.
Rendering depends only on the pieces and the moment it is rendered for, so a stored snapshot
re-renders byte for byte (see snapshots.py).
"""

import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from typing import Any

from apps.providers.tokens import count_message_tokens, count_tokens

_STEM_WORD = re.compile(r"[^\W_]+")
STEM_CHARS = 5


def stems(text: str) -> frozenset[str]:
    """Return the distinct word stems of text: lower-cased, their first STEM_CHARS letters."""
    return frozenset(word[:STEM_CHARS] for word in _STEM_WORD.findall(text.lower()))


# The blocks in their fixed order, each with its tag; "recent" is the chat messages themselves.
BLOCKS = (
    ("user_profile", "user-profile"),
    ("session_memory", "session-memory"),
    ("observations", "observations"),
    ("summary", "summary"),
    ("memory", "memory"),
    ("knowledge", "knowledge"),
    ("notes", "notes"),
    ("recall", "recall"),
    ("recent", None),
)
TAGS = dict(BLOCKS)
MEMORY_DESCRIPTION = "Source-backed case entries retrieved from previous threads for this turn."


@dataclass
class Piece:
    """One item of a block: what it is, where it came from, and what it shows."""

    type: str  # message | observation | summary | entry | chunk | note | profile | session_memory
    id: str
    content: str  # the stored text the item's hash is taken of
    seq: int | None = None
    score: float | None = None
    created_at: datetime | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    tokens: int | None = None  # of its rendered line, set by line_tokens()
    # The stored token count of `content`, where its row keeps one (observations, summaries).
    content_tokens: int | None = None
    hash: str | None = None  # of what it shows, set by piece_hash()
    # Its rendered line, when that does not depend on the moment (observations, see
    # observation_piece); otherwise piece_line() renders it each time.
    line: str | None = None
    # Its words' stems, for choosing observations by the query (history.py).
    stems: frozenset[str] | None = None


def counted(piece: Piece) -> int:
    """Return the tokens of the piece's line, which line_tokens() has set (or its maker)."""
    if piece.tokens is None:
        raise ValueError(f"the tokens of {piece.type} {piece.id} are not counted yet")
    return piece.tokens


def seq_of(piece: Piece) -> int:
    """Return the seq of a piece that has one: a message, an observation, a summary."""
    if piece.seq is None:
        raise ValueError(f"{piece.type} {piece.id} has no seq")
    return piece.seq


_ESCAPED = re.compile("[&<>]")


def escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def age(then: datetime, now: datetime) -> str:
    """Return how long ago `then` was, in words: today, 1 day ago, 3 weeks ago, …"""
    days = max(0, (now - then).days)
    if days == 0:
        return "today"
    for unit, size, below in (("day", 1, 14), ("week", 7, 60), ("month", 30, 730)):
        if days < below:
            count = days // size
            return f"{count} {unit}{'s' if count != 1 else ''} ago"
    years = days // 365
    return f"{years} year{'s' if years != 1 else ''} ago"


def when(moment: datetime | None) -> str:
    """Return a message's time as a recalled line shows it: 2024-02-05 08:00 UTC."""
    if moment is None:
        return "undated"
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def message_head(role: str, kind: str, name: str) -> str:
    """Return who said a message as its line in a block starts: role, kind, tool name."""
    head = role if kind == "message" else f"{role} {kind}"
    return f"{head} {name}" if name else head


def message_text(role: str, kind: str, name: str, content: str, payload) -> str:
    """Return a message as one line of a block: who, what, and its payload as JSON."""
    head = message_head(role, kind, name)
    body = content
    if payload is not None:
        data = json.dumps(payload, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        body = f"{body} {data}" if body else data
    return f"{head}: {body}"


def _span(block: str, piece: Piece) -> str:
    """Return the seq span heading an observation's or the summary's line."""
    if block == "observations":
        return f"[#{piece.seq}–#{piece.extra['last_seq']}]"
    return f"[#1–#{piece.seq}]"


def piece_line(block: str, piece: Piece, now: datetime) -> str:
    """Return the piece as its block shows it (escaped)."""
    if piece.line is not None:
        return piece.line
    if block in ("observations", "summary"):
        return f"{_span(block, piece)}\n{escape(piece.content)}"
    if block == "memory":
        # An entry's piece always has the time it was created (hit_piece).
        return f"- {escape(piece.content)} ({age(piece.created_at, now)})"  # type: ignore[arg-type]
    if block == "knowledge":
        return f"- {escape(piece.content)}"
    if block == "notes":  # the path names it, as the note's own [[links]] do
        return f"## {escape(piece.extra['path'])}\n{escape(piece.content)}"
    if block == "recall":  # its date, so that a model can tell when it was said
        return f"#{piece.seq} [{when(piece.created_at)}] {escape(piece.content)}"
    return escape(piece.content)  # user_profile, session_memory


def line_tokens(block: str, piece: Piece, now: datetime) -> int:
    """Return (and keep on the piece) the tokens of its rendered line, counted once."""
    if piece.tokens is None:
        if piece.content_tokens is not None:  # observations and summaries keep their count
            # The line is a span header, a newline and the content escaped. count_tokens is
            # additive across whitespace, and escaping turns one symbol token (&, <, >) into
            # three (&, lt, ;): the row's own count of its content plus two per escape serves.
            escapes = len(_ESCAPED.findall(piece.content))
            piece.tokens = count_tokens(_span(block, piece)) + piece.content_tokens + 2 * escapes
        else:
            piece.tokens = count_tokens(piece_line(block, piece, now))
    return piece.tokens


def recall_line_tokens(piece: Piece, head: str, token_count: int) -> int:
    """Return (and keep on the piece) the tokens of a recalled message's line, from the count
    its append stored (count_message_tokens: 4 + its content + its payload as JSON).

    The line is "#seq [date] head: content payload", escaped. count_tokens is additive across
    whitespace and at ":", so the line's count is the prefix's, the head's, one for ":" and
    the stored count less its framing, plus two per escaped symbol (& < > become three
    tokens). Counting each recalled line again took ~2 of a ~25 ms context (bench/context.py,
    SQLite, in-process); tests/context/test_render.py checks the sum against count_tokens.
    """
    escapes = sum(piece.content.count(symbol) for symbol in "&<>")
    prefix = f"#{piece.seq} [{when(piece.created_at)}]"
    piece.tokens = count_tokens(prefix) + count_tokens(head) + 1 + token_count - 4 + 2 * escapes
    return piece.tokens


def block_text(block: str, pieces: list[Piece], now: datetime) -> str:
    """Return the block's text: its tag around its pieces' lines ("" when it has none)."""
    if not pieces or TAGS[block] is None:
        return ""
    ordered = pieces
    if block == "memory":  # most recent first, so stale cases weigh less than fresh ones
        ordered = sorted(pieces, key=lambda p: (p.created_at, p.id), reverse=True)
    if block == "recall":  # pieces come best hit first; the thread reads in its own order
        ordered = sorted(pieces, key=seq_of)
    lines = [piece_line(block, piece, now) for piece in ordered]
    if block == "memory":
        lines = [f"<description>{MEMORY_DESCRIPTION}</description>", "<value>", *lines, "</value>"]
    if block == "recall":
        lines = _with_gaps(ordered, lines)
    tag = TAGS[block]
    return "\n".join([f"<{tag}>", *lines, f"</{tag}>"])


def _with_gaps(pieces: list[Piece], lines: list[str]) -> list[str]:
    """Separate recalled stretches of a thread by an empty line where their seqs break."""
    out: list[str] = []
    for index, (piece, line) in enumerate(zip(pieces, lines, strict=True)):
        if index and piece.seq != seq_of(pieces[index - 1]) + 1:
            out.append("")
        out.append(line)
    return out


@cache
def block_overhead(block: str) -> int:
    """Return the tokens a block adds around its pieces' lines: its tags (and description)."""
    if TAGS[block] is None:
        return 0
    wrapper = f"<{TAGS[block]}>\n</{TAGS[block]}>"
    if block == "memory":
        wrapper += f"<description>{MEMORY_DESCRIPTION}</description><value></value>"
    return count_tokens(wrapper)


# json.dumps(extra, sort_keys=True, default=str), with its encoder built once, not per piece.
_EXTRA_JSON = json.JSONEncoder(sort_keys=True, default=str)


def piece_hash(piece: Piece) -> str:
    """Return (and keep on the piece) a fingerprint of what it shows, to tell later whether it
    changed: the manifest stores it, and the answer's items compare against it."""
    if piece.hash is None:
        extra = _EXTRA_JSON.encode(piece.extra)
        piece.hash = hashlib.sha256(f"{piece.content}\x00{extra}".encode()).hexdigest()[:16]
    return piece.hash


# An observation never changes once written (a reflection writes new rows), and a long
# thread's context shows a few hundred of them on every request: their text, lines, token
# counts and hashes are kept per process by id, so a context reads only the rows' sizes and the
# text of observations it has not shown before (snapshots.observation_block). Measured on
# bench/context.py's thread (250 observations shown, PostgreSQL, in-process): escaping,
# counting and hashing them took ~5 of a ~70 ms request, reading their text ~3 more; kept,
# a few dictionary lookups. About 2 KB per observation; the whole store is dropped when full
# (a reader keeps its own reference to what it took).
OBSERVATION_LINES = 20_000
_observations: dict = {}  # observation id -> ObservationLine


@dataclass(frozen=True)
class ObservationLine:
    id: str  # as text, as the piece shows it
    content: str
    line: str
    tokens: int  # of the line
    hash: str
    stems: frozenset[str]


def observation_kept(observation_id) -> ObservationLine | None:
    """Return what is kept of this observation, if this process has rendered it."""
    return _observations.get(observation_id)


def observation_piece(
    *,
    id,
    first_seq: int,
    last_seq: int,
    tokens: int,
    content: str | None = None,
    kept: ObservationLine | None = None,
) -> Piece:
    """An observation as the observations block holds it, its line rendered and counted once.

    Give its content, or what observation_kept() returned for it.
    """
    if kept is None:
        kept = _observations.get(id)
    if kept is None:
        if content is None:
            raise ValueError(f"observation {id}: give its content or what observation_kept() gave")
        kept = _observation_line(id, first_seq, last_seq, content, tokens)
        if len(_observations) >= OBSERVATION_LINES:
            _observations.clear()
        _observations[id] = kept
    return Piece(
        type="observation",
        id=kept.id,
        content=kept.content,
        seq=first_seq,
        extra={"last_seq": last_seq},
        content_tokens=tokens,
        tokens=kept.tokens,
        hash=kept.hash,
        line=kept.line,
        stems=kept.stems,
    )


def _observation_line(
    id, first_seq: int, last_seq: int, content: str, tokens: int
) -> ObservationLine:
    piece = Piece(
        type="observation",
        id="",
        content=content,
        seq=first_seq,
        extra={"last_seq": last_seq},
        content_tokens=tokens,
    )
    line = piece_line("observations", piece, datetime.min)  # an observation's line has no age
    counted = line_tokens("observations", piece, datetime.min)
    return ObservationLine(str(id), content, line, counted, piece_hash(piece), stems(content))


def chat_message(piece: Piece) -> dict:
    """Return a recent message as the context's `messages` list shows it."""
    return {
        "role": piece.extra["role"],
        "content": piece.content,
        "name": piece.extra["name"],
        "kind": piece.extra["kind"],
        "payload": piece.extra["payload"],
        "seq": piece.seq,
    }


def chat_message_tokens(piece: Piece) -> int:
    if piece.tokens is None:
        piece.tokens = count_message_tokens(piece.content, piece.extra["payload"])
    return piece.tokens


def block_tokens(block: str, pieces: list[Piece], now: datetime) -> int:
    """Return the tokens of the block's text: its pieces' lines and, if it has any, its tags."""
    if block == "recent":
        return sum(chat_message_tokens(piece) for piece in pieces)
    if not pieces:
        return 0
    return block_overhead(block) + sum(line_tokens(block, piece, now) for piece in pieces)
