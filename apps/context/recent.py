"""Choose the recent messages a context sends: the newest that fit the block's grant, as a
chat call can take them.

The block has no gaps: it is the thread's newest messages that fit, oldest first. Cutting it
there can leave a tool's result without the call it answers (the call did not fit), and a chat
completion endpoint refuses a tool message that no assistant tool call precedes; so such a
result is left out too (counted with what the budget left out). Only the oldest end is cut,
so only a result whose call lies before the block can lose it: one that names the id of a call
the block does not hold, or one that names none while no call precedes it in the block (it
would answer the call just before it, threads.tool_pairing).
"""

from types import SimpleNamespace

from apps.context.render import Piece, counted
from apps.threads.tool_pairing import answered_call_id, answers_a_call, call_id


def recent_within(pieces: list[Piece], grant: int) -> list[Piece]:
    """The newest pieces that fit grant, in order, without a result whose call is cut off."""
    total, start = 0, len(pieces)
    while start > 0 and total + counted(pieces[start - 1]) <= grant:
        start -= 1
        total += counted(pieces[start])
    return _with_their_calls(pieces[start:])


def newest_turn(pieces: list[Piece]) -> list[Piece]:
    """The newest piece, with the calls it answers and what lies between (what the block must
    hold whatever its share: what was just said or returned, in a form a chat call takes).
    Just the newest piece when its call is not among the pieces."""
    needed: set[str] = set()
    unnamed = False
    for index in range(len(pieces) - 1, -1, -1):
        message = _message(pieces[index])
        if message.kind == "tool_call":
            needed.discard(call_id(message))
            unnamed = False
        elif answers_a_call(message):
            answered = answered_call_id(message)
            if answered:
                needed.add(answered)
            else:
                unnamed = True
        if not needed and not unnamed:
            return pieces[index:]
    return pieces[-1:]


def _with_their_calls(pieces: list[Piece]) -> list[Piece]:
    calls: set[str] = set()
    kept = []
    for piece in pieces:
        message = _message(piece)
        if answers_a_call(message):
            answered = answered_call_id(message)
            if (answered and answered not in calls) or (not answered and not calls):
                continue
        if message.kind == "tool_call":
            calls.add(call_id(message) or f"seq {piece.seq}")
        kept.append(piece)
    return kept


def _message(piece: Piece) -> SimpleNamespace:
    """The piece as threads.tool_pairing reads a message (what a chat call gets: the payload)."""
    return SimpleNamespace(metadata=None, **piece.extra)
