"""The recent block: the newest messages that fit, as a chat call can take them."""

from apps.context.recent import newest_turn, recent_within
from apps.context.render import Piece


def _piece(seq: int, kind: str = "message", payload=None, tokens: int = 10) -> Piece:
    role = {"tool_call": "assistant", "tool_result": "tool"}.get(kind, "user")
    extra = {"role": role, "kind": kind, "name": "", "payload": payload}
    text = f"m{seq}"
    return Piece(type="message", id=str(seq), content=text, seq=seq, tokens=tokens, extra=extra)


def _seqs(pieces: list[Piece]) -> list[int]:
    return [piece.seq for piece in pieces]


LOOP = [
    _piece(1),
    _piece(2, "tool_call", {"id": "a"}),
    _piece(3, "tool_call", {"id": "b"}),
    _piece(4, "tool_result", {"tool_call_id": "a"}),
    _piece(5, "tool_result", {"tool_call_id": "b"}),
    _piece(6, "tool_call", {"id": "c"}),
    _piece(7, "tool_result", {}),  # no id: it answers the call just before it
]


def test_a_result_whose_call_did_not_fit_is_left_out():
    assert _seqs(recent_within(LOOP, 70)) == [1, 2, 3, 4, 5, 6, 7]
    assert _seqs(recent_within(LOOP, 50)) == [3, 5, 6, 7]  # 4 answers call a, cut off
    assert _seqs(recent_within(LOOP, 40)) == [6, 7]  # 4 and 5 lost their calls
    assert _seqs(recent_within(LOOP, 10)) == []  # 7 alone: its call is cut off


def test_the_newest_turn_reaches_back_to_the_calls_its_results_answer():
    assert _seqs(newest_turn(LOOP)) == [6, 7]
    assert _seqs(newest_turn(LOOP[:5])) == [2, 3, 4, 5]
    assert _seqs(newest_turn(LOOP[:1])) == [1]
    # A result whose call is not among the pieces: just the newest piece.
    assert _seqs(newest_turn([_piece(8), _piece(9, "tool_result", {"tool_call_id": "z"})])) == [9]
