"""What the agent saw, as a picture: blocks collapsed to ranges of items, what the budget cut,
and two contexts compared block by block.

A long thread's context holds hundreds of messages; listed one per line they hid the shape of
what was given. Each block is summarised as ranges ("messages #1–#282 (observed)", "#283–#302
recent"), each range opening to its items.
"""

from dataclasses import dataclass, field

# What the items of a block are said to be, after their range of messages.
RANGE_WORDS = {"recent": "recent", "recall": "recalled", "observations": "observed"}


@dataclass
class Range:
    label: str
    items: list[dict] = field(default_factory=list)
    tokens: int | None = None  # of its items, when known (left-out items)
    first_seq: int | None = None  # a range of messages not listed item by item starts here

    @property
    def count(self) -> int:
        return len(self.items)


def item_ranges(name: str, items: list[dict], spans: dict[str, tuple[int, int]]) -> list[Range]:
    """Return a block's items as ranges, in order of the messages they stand for.

    1. Messages: runs of consecutive seqs, "#a–#b recent" (recall: "recalled").
    2. Observations and summaries: the messages they cover (spans: id -> (first, last) seq),
       runs of adjacent coverage merged, "messages #a–#b (observed)".
    3. Anything else (entries, chunks, notes, profile, session memory): one range of all.
    """
    if not items:
        return []
    kind = items[0]["type"]
    if kind == "message":
        ordered = sorted(items, key=lambda item: item["seq"] or 0)
        runs = _runs(ordered, lambda item: (item["seq"], item["seq"]))
        word = RANGE_WORDS.get(name, "")
        return [Range(f"{_span(first, last)} {word}".strip(), run) for first, last, run in runs]
    if kind in ("observation", "summary"):
        ordered = sorted(items, key=lambda item: spans.get(item["id"], (item["seq"] or 0,))[0])
        runs = _runs(ordered, lambda item: spans.get(item["id"], (item["seq"], item["seq"])))
        word = "observed" if kind == "observation" else "summarised"
        return [Range(f"messages {_span(first, last)} ({word})", run) for first, last, run in runs]
    what = kind.replace("_", " ")
    return [Range(f"{len(items)} {what}{'s' if len(items) != 1 else ''}", list(items))]


def _runs(items: list[dict], span) -> list[tuple[int, int, list[dict]]]:
    """Group items whose (first, last) spans touch or overlap: [(first, last, items)]."""
    runs: list[tuple[int, int, list[dict]]] = []
    for item in items:
        first, last = span(item)
        if first is None:
            runs.append((0, 0, [item]))
        elif runs and runs[-1][2] and first <= runs[-1][1] + 1:
            start, end, run = runs[-1]
            runs[-1] = (start, max(end, last), [*run, item])
        else:
            runs.append((first, last, [item]))
    return runs


def _span(first: int, last: int) -> str:
    return f"#{first}" if first == last else f"#{first}–#{last}"


def left_out_ranges(left_out: dict | None, spans: dict) -> dict[str, dict]:
    """Per block, what the budget cut as ranges with their tokens, how many were cut and how
    many of them are shown (a range never read counts as shown: the thread page lists it)."""
    if not left_out:
        return {}
    out = {}
    for name, cut in left_out.items():
        ranges = item_ranges("", cut["items"], spans)  # a cut range is not "recent" or "recalled"
        for found in ranges:
            found.tokens = sum(item["tokens"] or 0 for item in found.items)
        listed = len(cut["items"])
        if cut.get("older"):  # never read: named as a range, its messages are on the thread page
            first, last = cut["older"]
            unread = Range(f"{_span(first, last)}, older messages never read", first_seq=first)
            ranges.insert(0, unread)
            listed += last - first + 1
        out[name] = {"count": cut["count"], "listed": listed, "ranges": ranges}
    return out


def picture_blocks(replay: dict, left_out: dict | None, deltas: list | None, spans: dict) -> None:
    """Give each replayed block its ranges, what the budget cut of it (recorded, else its trim
    warning), and each compared block its entered / left / changed items as ranges."""
    cut = left_out_ranges(left_out, spans)
    trimmed = {w["block"]: w["message"] for w in replay["warnings"] if w.get("block")}
    for block in replay["blocks"]:
        name = block["name"]
        block.update(
            ranges=item_ranges(name, block["items"], spans),
            left_out=cut.get(name),
            trimmed=trimmed.get(name),
        )
    for delta in deltas or []:
        delta.ranges = {key: item_ranges("", getattr(delta, key), spans) for key in DIFF_KEYS}


@dataclass
class BlockDelta:
    """One block compared between two contexts: items and tokens before and after."""

    name: str
    items_before: int
    items_after: int
    tokens_before: int
    tokens_after: int
    entered: list[dict]
    left: list[dict]
    changed: list[dict]
    ranges: dict = field(default_factory=dict)  # entered / left / changed as item_ranges

    @property
    def items_delta(self) -> int:
        return self.items_after - self.items_before

    @property
    def tokens_delta(self) -> int:
        return self.tokens_after - self.tokens_before

    @property
    def same(self) -> bool:
        return not (self.entered or self.left or self.changed or self.tokens_delta)


def block_deltas(before: dict, after: dict, diff: dict) -> list[BlockDelta]:
    """Compare two replayed contexts block by block (diff: snapshot_diff of the two)."""
    old = {block["name"]: block for block in before["blocks"]}
    new = {block["name"]: block for block in after["blocks"]}
    names = [block["name"] for block in after["blocks"]]
    names += [name for name in old if name not in new]
    empty = {"items": [], "tokens": 0}
    deltas = []
    for name in names:
        was, now = old.get(name, empty), new.get(name, empty)
        deltas.append(
            BlockDelta(
                name,
                len(was["items"]),
                len(now["items"]),
                was["tokens"],
                now["tokens"],
                *([item for item in diff[key] if item["block"] == name] for key in DIFF_KEYS),
            )
        )
    return deltas


DIFF_KEYS = ("entered", "left", "changed")
