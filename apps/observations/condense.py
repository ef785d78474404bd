"""Condense extractive digests without a model: for the Reflector and for compaction.

A digest (extractive.messages_digest) is a list of entries, each "[#refs] text". Condensing:

1. merges entries that say the same thing (their references join: "[#4, 19] Ruth: …"; a line
   said more than four times counts the references it leaves out: "[#1–2, 40–41, 3 more, 290]");
2. groups the successful steps of one tool into one entry, where the first stood: the tool,
   how many times, the arguments all its calls had alike once, then each call's other
   arguments and what its result named ("fetch_records ×3 → ok (limit=12) [url, batch]:
   (https://…?page=1, B-1) item-1-0, item-1-1 | (…, B-4) item-4-0 | …"); the errors between
   them stay in place, so what failed and when is still told;
3. puts a reply on the line of what it answers ("Ruth: …? → A US cup is about 237 ml …"),
   and drops a reply that carries nothing to look up — cut prose with no identifier, number,
   date, URL, path or name in it; no line cites it then, as none quotes it (recall and
   message ranges still find its words next to the line it answered);
   the user's requests and statements, errors, decisions and every line with a fact stay.

condense_within() also fits a budget: it drops whole entries, oldest first and least
important first (replies, then tool runs, then statements, then requests, errors and
decisions), and says how many it dropped.
"""

import re
from dataclasses import dataclass

from apps.observations import extractive
from apps.providers.tokens import count_tokens

_REF = re.compile(rf"^\[({extractive.SEQ_REFS})\] ")
_MORE = re.compile(r"#?(\d+) more")
_SHOWN_REFS = 4  # references a line lists before it counts the rest
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
    """Return references as one: runs of adjacent seqs joined, "#" only on the first.

    "#1–4, 9, 11–12". A line repeated more than four times keeps its first two references
    and its last, and says how many it leaves out ("#1–2, 40–41, 3 more, 290"): a model reads
    the count and the span; the list would cost a fifth of a conversation's observations.
    The "n more" of a reference parsed back is counted again when it is joined with others.
    """
    spans, hidden = [], 0
    for ref in refs:
        more = _MORE.fullmatch(ref)
        if more:
            hidden += int(more.group(1))
            continue
        bounds = [int(part) for part in re.findall(r"\d+", ref)]
        if bounds:
            spans.append((min(bounds), max(bounds)))
    merged: list[list[int]] = []
    for first, last in sorted(spans):
        if merged and first <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], last)
        else:
            merged.append([first, last])
    shown = [f"{a}" if a == b else f"{a}–{b}" for a, b in merged]
    if len(shown) > _SHOWN_REFS or (hidden and len(shown) >= 3):
        shown = [*shown[:2], f"{hidden + len(shown) - 3} more", shown[-1]]
    elif hidden:  # a reference first, then the count: "#1–11, 3 more", "#1, 3 more, 40"
        shown = [shown[0], f"{hidden} more", *shown[1:]]
    return "#" + ", ".join(shown) if shown else ""


def condense(texts: list[str]) -> str:
    """Return the digests condensed into one (see the module's steps)."""
    return "\n".join(entry.render() for entry in _condensed(texts))


def condense_keeping(texts: list[str]) -> str | None:
    """Return the digests condensed, or None when condensing would lose an identifier, an
    error or a decision of theirs (extractive.essentials_dropped): the caller keeps them."""
    content = condense(texts)
    text = "\n".join(texts)
    if extractive.identifiers_in(text) - extractive.identifiers_in(content):
        return None
    if extractive.essentials_dropped(text, content):
        return None
    return content


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
    return _answered_repeats(_without_bare_replies(_tool_runs(entries)))


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
    if _is_reply(text):
        return REPLY
    return STATEMENT


def _merged(entries: list[Entry]) -> list[Entry]:
    """Entries that say the same thing become one, at the place of the first (see _folded)."""
    seen: dict[str, Entry] = {}

    def first(entry: Entry) -> Entry:
        return seen.setdefault(entry.text, entry)

    return _folded(entries, first)


def _folded(entries: list[Entry], line_of) -> list[Entry]:
    """Fold each entry into the line line_of(entry) names, when that is another one: its
    references join that line and it goes.

    A folded entry that starts a session (dated) hands its date to the next entry that stays,
    so the session still shows when it began; when the next one starts a session of its own
    (or none follows), the dated entry stays where it was instead.
    """
    out: list[Entry] = []
    held: tuple[Entry, Entry] | None = None  # a dated repeat, and the line it repeats

    def join(entry: Entry, line: Entry) -> None:
        # A count of left-out references ("3 more") adds up, however often it repeats.
        line.refs += [ref for ref in entry.refs if _MORE.fullmatch(ref) or ref not in line.refs]

    for entry in entries:
        line = line_of(entry)
        if line is not entry and entry.date is None:
            join(entry, line)
            continue
        if held is not None:
            if line is entry and entry.date is None:
                entry.date = held[0].date
                join(*held)
            else:
                out.append(held[0])
            held = None
        if line is not entry:
            held = (entry, line)
            continue
        out.append(entry)
    if held is not None:
        out.append(held[0])
    return out


def _tool_runs(entries: list[Entry]) -> list[Entry]:
    """The successful steps of one tool become one entry, where its first stood: the tool, how
    many times, the arguments every call had alike once, then each call's other arguments and
    what its result named, in order. Errors stay where they were, on their own lines."""
    groups: dict[str, list[tuple[Entry, re.Match]]] = {}
    out: list[Entry | str] = []
    for entry in entries:
        match = _TOOL_OK.match(entry.text) if "\n" not in entry.text else None
        if match is None:
            out.append(entry)
            continue
        if match["tool"] not in groups:
            groups[match["tool"]] = []
            out.append(match["tool"])  # where the group goes
        groups[match["tool"]].append((entry, match))
    return [item if isinstance(item, Entry) else _tool_group(groups[item]) for item in out]


def _tool_group(calls: list[tuple[Entry, re.Match]]) -> Entry:
    if len(calls) == 1:
        return calls[0][0]
    arguments = [dict(_ARG.findall(match["args"])) for _, match in calls]
    keys = list(arguments[0])
    same_keys = all(list(found) == keys for found in arguments)
    alike = {
        key: arguments[0][key]
        for key in keys
        if same_keys and all(found[key] == arguments[0][key] for found in arguments)
    }
    varying = [key for key in keys if key not in alike]
    count, lines = 0, []
    for (entry, match), found in zip(calls, arguments, strict=True):
        times = re.search(r" ×(\d+)$", entry.text)
        count += int(times.group(1)) if times else 1
        call = ", ".join(found[key].strip() for key in varying) if same_keys else match["args"]
        named = (match["ids"] or "").removesuffix(times.group(0) if times else "")
        lines.append(
            f"({call})" + (f" {named}" if named else "") + (times.group(0) if times else "")
        )
    tool = calls[0][1]["tool"]
    head = f"{tool} ×{count} → ok"
    if alike:
        head += " (" + ", ".join(f"{key}={value.strip()}" for key, value in alike.items()) + ")"
    if same_keys and varying:
        head += f" [{', '.join(varying)}]"
    refs = [ref for entry, _ in calls for ref in entry.refs]
    return Entry(refs=refs, text=f"{head}: " + " | ".join(lines), date=calls[0][0].date, rank=TOOL)


def _without_bare_replies(entries: list[Entry]) -> list[Entry]:
    """A reply follows what it answers on one line ("Ruth: …? → A US cup is 237 ml …"); a reply
    whose kept prose names nothing goes, and with it its references. A reply that
    is an error or a decision ("choose …") joins its question all the same but never goes."""
    out: list[Entry] = []
    answered: set[int] = set()  # entries a reply was joined to
    for entry in entries:
        said = entry.text.split(":", 1)[-1].strip()
        dated = entry.date is not None  # the start of a session stays
        previous = out[-1] if out else None
        if not _is_reply(entry.text) or dated or previous is None:
            out.append(entry)
            continue
        bare = not extractive.identifiers_in(said) and not _NAME.search(said)
        if entry.rank == REPLY and bare and not re.search(r"\d", said):
            continue  # nothing of it stays, so no line cites it
        elif (
            previous.rank in (STATEMENT, ESSENTIAL)
            and not _is_reply(previous.text)
            and id(previous) not in answered
        ):
            previous.text += f" → {said}"
            previous.refs += entry.refs
            previous.rank = max(previous.rank, entry.rank)
            answered.add(id(previous))
        else:
            out.append(entry)
    return out


def _is_reply(text: str) -> bool:
    """Whether an entry's text is said by the assistant (or the system): a reply."""
    return text.split(":", 1)[0] in ("Assistant", "System")


def _answered_repeats(entries: list[Entry]) -> list[Entry]:
    """A line that repeats a question with its answer ("Ruth: …? → …"), or the question alone,
    goes into the first line that has both: its references join it (a dated one hands its date
    on, see _folded). A different answer to the same question stays."""
    answered: dict[str, Entry] = {}
    for entry in entries:
        said, arrow, _ = entry.text.partition(" → ")
        if arrow:
            answered.setdefault(said, entry)

    def line_of(entry: Entry) -> Entry:
        said, arrow, _ = entry.text.partition(" → ")
        line = answered.get(said)
        if line is None or (arrow and entry.text != line.text):
            return entry
        return line

    return _folded(entries, line_of)
