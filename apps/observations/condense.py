"""Condense extractive digests without a model: for the Reflector and for compaction.

A digest (extractive.messages_digest) is a list of entries, each "[#refs] text". Condensing:

1. merges entries that say the same thing (their references join: "[#4, #19] Ruth: …");
2. groups the runs of one tool that succeeded into one entry: the tool, how many times, the
   references, and the distinct values of each argument and the identifiers found, each once
   ("fetch_records ×4 → ok: url=… | …; batch=B-1 | B-4; limit=12; item-1-0, …");
3. drops what another side said that carries nothing to look up — a reply's cut prose with
   no identifier, number, date, URL, path or name in it — keeping its reference range in the
   entry before it, so that recall can still find the words;
   the user's requests and statements, errors, decisions and every line with a fact stay.

condense_within() also fits a budget: it drops whole entries, oldest first and least
important first (replies, then tool runs, then statements, then requests, errors and
decisions), and says how many it dropped.
"""

import re
from dataclasses import dataclass

from apps.observations import extractive
from apps.providers.tokens import count_tokens

_REF = re.compile(r"^\[(#[\d–, #]+)\] ")
_DATE = re.compile(r"^\((\d{4}-\d{2}-\d{2} \d{2}:\d{2})\) ")
_TOOL_OK = re.compile(r"^(?P<tool>[\w.-]+)\((?P<args>.*)\) → ok(?:; (?P<ids>.*))?$")
_ARG = re.compile(r"(\w+)=((?:[^,]|,(?! \w+=))*)")
_NAME = re.compile(r"(?<=[\w,;:)] )[A-Z][\w'’-]+")
_KEEP = re.compile(r"^(User\b|[^:]*\berror\b|Error\b)", re.IGNORECASE)

# Importance when a budget forces entries out (lower goes first).
REPLY, TOOL, STATEMENT, ESSENTIAL = range(4)


@dataclass
class Entry:
    refs: list[str]
    text: str  # without its references and date
    date: str | None = None
    rank: int = STATEMENT

    def render(self) -> str:
        dated = f"({self.date}) " if self.date else ""
        return f"[{joined_refs(self.refs)}] {dated}{self.text}"


def joined_refs(refs: list[str]) -> str:
    """Return references as one, runs of adjacent seqs joined: "#1–4, #9"."""
    spans = []
    for ref in refs:
        bounds = [int(part) for part in re.findall(r"\d+", ref)]
        if bounds:
            spans.append((min(bounds), max(bounds)))
    merged: list[list[int]] = []
    for first, last in sorted(spans):
        if merged and first <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], last)
        else:
            merged.append([first, last])
    return ", ".join(f"#{a}" if a == b else f"#{a}–{b}" for a, b in merged)


def condense(texts: list[str]) -> str:
    """Return the digests condensed into one (see the module's steps)."""
    return "\n".join(entry.render() for entry in _condensed(texts))


def condense_within(texts: list[str], budget: int) -> tuple[str, int]:
    """Return the digests condensed and cut to budget tokens, and how many entries went."""
    entries = _condensed(texts)
    sizes = [count_tokens(entry.render()) + 1 for entry in entries]
    total, dropped = sum(sizes), set()
    order = sorted(range(len(entries)), key=lambda index: (entries[index].rank, index))
    for index in order:
        if total <= budget:
            break
        dropped.add(index)
        total -= sizes[index]
    kept = [entry.render() for index, entry in enumerate(entries) if index not in dropped]
    return "\n".join(kept), len(dropped)


def _condensed(texts: list[str]) -> list[Entry]:
    entries = _merged([_parse(entry) for text in texts for entry in _split(text)])
    return _without_bare_replies(_tool_runs(entries))


def _split(text: str) -> list[str]:
    """The entries of a digest: a line with its reference and the lines that continue it."""
    out: list[str] = []
    for line in text.splitlines():
        if out and not _REF.match(line):
            out[-1] += "\n" + line
        elif line.strip():
            out.append(line)
    return out


def _parse(raw: str) -> Entry:
    ref = _REF.match(raw)
    refs = [part.strip() for part in ref.group(1).split(",")] if ref else []
    text = raw[ref.end() :] if ref else raw
    date = _DATE.match(text)
    if date:
        text = text[date.end() :]
    entry = Entry(refs=refs, text=text, date=date.group(1) if date else None)
    entry.rank = _rank(text)
    return entry


def _rank(text: str) -> int:
    if _KEEP.match(text) or extractive.essentials_dropped(text, ""):
        return ESSENTIAL
    if _TOOL_OK.match(text):
        return TOOL
    speaker = text.split(":", 1)[0]
    if speaker in ("Assistant", "System"):
        return REPLY
    return STATEMENT


def _merged(entries: list[Entry]) -> list[Entry]:
    """Entries that say the same thing become one, at the place of the first; an entry that
    starts a session (dated) stays where it is."""
    seen: dict[str, Entry] = {}
    out = []
    for entry in entries:
        first = seen.get(entry.text)
        if entry.date is not None:
            out.append(entry)
        elif first is None:
            seen[entry.text] = entry
            out.append(entry)
        else:
            first.refs += [ref for ref in entry.refs if ref not in first.refs]
    return out


def _tool_runs(entries: list[Entry]) -> list[Entry]:
    """Consecutive successful steps of one tool become one entry with every distinct value."""
    out: list[Entry] = []
    run: list[tuple[Entry, re.Match]] = []

    def flush():
        if len(run) == 1:
            out.append(run[0][0])
        elif run:
            out.append(_tool_run(run))
        run.clear()

    for entry in entries:
        match = _TOOL_OK.match(entry.text) if "\n" not in entry.text else None
        if match and run and match["tool"] != run[0][1]["tool"]:
            flush()
        if match:
            run.append((entry, match))
        else:
            flush()
            out.append(entry)
    flush()
    return out


def _tool_run(run: list[tuple[Entry, re.Match]]) -> Entry:
    values: dict[str, list[str]] = {}
    ids: list[str] = []
    count = 0
    for entry, match in run:
        for key, value in _ARG.findall(match["args"]):
            kept = values.setdefault(key, [])
            if value.strip() not in kept:
                kept.append(value.strip())
        for token in (match["ids"] or "").split(", "):
            if token and token not in ids:
                ids.append(token)
        times = re.search(r" ×(\d+)$", entry.text)
        count += int(times.group(1)) if times else 1
    arguments = "; ".join(f"{key}={' | '.join(found)}" for key, found in values.items())
    text = f"{run[0][1]['tool']} ×{count} → ok: {arguments}"
    if ids:
        text += f"; {', '.join(ids)}"
    refs = [ref for entry, _ in run for ref in entry.refs]
    return Entry(refs=refs, text=text, date=run[0][0].date, rank=TOOL)


def _without_bare_replies(entries: list[Entry]) -> list[Entry]:
    """Replies whose kept prose names nothing go; their references join the entry before."""
    out: list[Entry] = []
    for entry in entries:
        said = entry.text.split(":", 1)[-1]
        bare = entry.rank == REPLY and not extractive.identifiers_in(said)
        dated = entry.date is not None  # the start of a session stays
        if bare and not dated and not _NAME.search(said) and not re.search(r"\d", said) and out:
            out[-1].refs += entry.refs
            continue
        out.append(entry)
    return out
