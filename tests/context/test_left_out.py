"""What the budget left out: each block's candidates not kept, stored and read back."""

from dataclasses import dataclass

from apps.context.left_out import (
    LEFT_OUT_LISTED,
    LeftOut,
    left_out_pieces,
    manifest_left_out,
    snapshot_left_out,
)
from apps.context.render import Piece


@dataclass
class Stretch:
    hit: Piece
    pieces: list[Piece]


def message(seq: int) -> Piece:
    return Piece(type="message", id=f"m{seq}", content=f"message {seq}", seq=seq, tokens=seq)


def test_it_lists_each_blocks_candidates_that_were_not_kept_and_recall_hits_not_shown():
    recent = [message(seq) for seq in range(10, 16)]
    entries = [Piece(type="entry", id=f"e{n}", content="x", tokens=5) for n in range(3)]
    shown, hidden = Stretch(message(3), [message(2), message(3)]), Stretch(message(7), [message(7)])
    kept = {"recent": recent[2:], "memory": entries[:1], "recall": [message(2), message(3)]}

    cut = left_out_pieces(
        candidates={"recent": recent, "memory": entries, "knowledge": []},
        recall=[shown, hidden],
        kept=kept,
    )

    assert {name: [p.id for p in left.pieces] for name, left in cut.items()} == {
        "recent": ["m10", "m11"],
        "memory": ["e1", "e2"],
        "recall": ["m7"],
    }
    assert cut["recent"].count == 2 and cut["recent"].older is None


def test_older_messages_never_read_are_the_range_just_before_the_recent_candidates():
    recent = [message(seq) for seq in range(40, 46)]

    cut = left_out_pieces(
        candidates={"recent": recent}, recall=[], kept={"recent": recent[1:]}, unread_messages=30
    )

    assert cut["recent"].older == (10, 39)
    assert cut["recent"].count == 31 and [p.seq for p in cut["recent"].pieces] == [40]
    assert manifest_left_out(cut)["recent"]["older"] == [10, 39]


def test_the_manifest_keeps_a_bounded_list_and_the_count():
    many = [message(seq) for seq in range(1, LEFT_OUT_LISTED + 11)]

    stored = manifest_left_out({"recent": LeftOut(many, len(many))})

    class Snapshot:
        manifest = {"left_out": stored}

    [(name, read)] = snapshot_left_out(snapshot=Snapshot()).items()
    assert name == "recent" and read["count"] == LEFT_OUT_LISTED + 10
    assert len(read["items"]) == LEFT_OUT_LISTED
    assert read["items"][0] == {"type": "message", "id": "m1", "seq": 1, "tokens": 1}
    assert read["older"] is None


def test_a_snapshot_that_did_not_record_it_says_none():
    class Snapshot:
        manifest = {"blocks": []}

    assert snapshot_left_out(snapshot=Snapshot()) is None
