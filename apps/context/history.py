"""Choose the observations a context shows when they do not all fit the block's grant.

The newest observations carry on where the recent window starts, so they come first, up to
NEWEST_SHARE of the grant; the rest of the grant goes to the observations that match the
query best, then to the newest of what is left. The block shows them in time order, and the
answer says which seq ranges were left out.

An observation matches by the query's content words it holds, each weighted by how rare it
is among the thread's active observations (idf = log(1 + N / df)); words are compared by
their first STEM_CHARS letters, so "refunded" matches "refund". An observation never changes
once written, so its words are taken once per process with its rendered line (render.py).
"""

import math

from apps.context.render import STEM_CHARS, Piece, counted, seq_of

NEWEST_SHARE = 0.5


def observations_choose(
    pieces: list[Piece], *, grant: int, overhead: int, terms: list[str]
) -> list[Piece]:
    """Return the observations (in time order) that fit grant.

    pieces are the active observations in time order, each with its tokens and its word stems;
    overhead is what the block's tags take once it shows anything.
    """
    tokens = [counted(piece) for piece in pieces]
    if sum(tokens) + overhead <= grant:
        return pieces
    room = grant - overhead
    chosen: set[int] = set()

    def take(index: int) -> None:
        nonlocal room
        if index not in chosen and tokens[index] <= room:
            chosen.add(index)
            room -= tokens[index]

    newest_room = room * NEWEST_SHARE
    spent = 0
    for index in range(len(pieces) - 1, -1, -1):
        if spent + tokens[index] > newest_room:
            break
        take(index)
        spent += tokens[index]
    for index in _by_relevance(pieces, terms):
        take(index)
    smallest = min(tokens, default=0)
    for index in range(len(pieces) - 1, -1, -1):
        if room < smallest:  # nothing more fits (500 observations: most of them, in a tool loop)
            break
        take(index)
    return [pieces[index] for index in sorted(chosen)]


def _by_relevance(pieces: list[Piece], terms: list[str]) -> list[int]:
    """Return the indexes of the observations holding any query word, best match first."""
    wanted = {term[:STEM_CHARS] for term in terms}
    if not wanted:
        return []
    # An observation's piece always has its stems (observation_piece); any other, none.
    held = [wanted & (piece.stems or frozenset()) for piece in pieces]
    frequency = dict.fromkeys(wanted, 0)
    for found in held:
        for stem in found:
            frequency[stem] += 1
    weight = {stem: math.log(1 + len(pieces) / count) for stem, count in frequency.items() if count}
    scored = [
        (sum(weight[stem] for stem in found), index) for index, found in enumerate(held) if found
    ]
    return [index for score, index in sorted(scored, key=lambda s: (-s[0], -s[1]))]


def seq_ranges(pieces: list[Piece]) -> str:
    """Return the seq ranges observations cover, as "#1–#40, #81–#120"."""
    spans: list[list[int]] = []
    for piece in pieces:
        first, last = seq_of(piece), piece.extra["last_seq"]
        if spans and first == spans[-1][1] + 1:
            spans[-1][1] = last
        else:
            spans.append([first, last])
    return ", ".join(f"#{first}–#{last}" for first, last in spans)
