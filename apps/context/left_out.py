"""What the budget left out of a context, kept in its snapshot so an operator can see it.

The assembly hands snapshot_store each block's candidates that were not kept (left_out_pieces);
the manifest stores them column by column, as it stores the kept items.
"""

from dataclasses import dataclass

from apps.context.render import Piece, seq_of

# Left-out pieces listed per block: the rest are counted. A long thread's cut history is a few
# ranges of messages, so this bounds a manifest without hiding what matters.
LEFT_OUT_LISTED = 500


@dataclass
class LeftOut:
    """What one block could not hold: the pieces, how many (listed or not), and for the recent
    block the older messages that were never read, as (first seq, last seq)."""

    pieces: list[Piece]
    count: int
    older: tuple[int, int] | None = None


def left_out_pieces(
    *,
    candidates: dict[str, list[Piece]],
    recall: list,
    kept: dict[str, list[Piece]],
    unread_messages: int = 0,
) -> dict[str, LeftOut]:
    """Return, per block, what the budget left out, in the candidates' order.

    1. Each block: its candidates not kept.
    2. Recall: the hits (each a stretch's `hit`) whose message is not shown.
    3. Recent: also the `unread_messages` older messages that max_tokens could not hold and
       were never read (the ones just before the first candidate: the window has no gaps).
    """
    out = {}
    for name, pieces in candidates.items():
        shown = {(piece.type, piece.id) for piece in kept.get(name, [])}
        cut = [piece for piece in pieces if (piece.type, piece.id) not in shown]
        if cut:
            out[name] = LeftOut(cut, len(cut))
    seqs = {piece.seq for piece in kept.get("recall", [])}
    hits = [stretch.hit for stretch in recall if stretch.hit.seq not in seqs]
    if hits:
        out["recall"] = LeftOut(hits, len(hits))
    recent = candidates.get("recent") or []
    if unread_messages > 0 and recent:
        first = seq_of(recent[0])
        older = out.setdefault("recent", LeftOut([], 0))
        older.older = (max(1, first - unread_messages), first - 1)
        older.count += unread_messages
    return out


def manifest_left_out(left_out: dict[str, LeftOut]) -> dict[str, dict]:
    """Return what was left out as the manifest stores it, column by column per block:
    {"type", "id", "seq", "tokens", "count", "older"} (count: how many were left out, listed or
    not; older: the recent block's unread messages as [first, last] seq, or null)."""
    stored = {}
    for name, cut in left_out.items():
        listed = cut.pieces[:LEFT_OUT_LISTED]
        stored[name] = {
            "type": [piece.type for piece in listed],
            "id": [piece.id for piece in listed],
            "seq": [piece.seq for piece in listed],
            "tokens": [piece.tokens for piece in listed],
            "count": cut.count,
            "older": list(cut.older) if cut.older else None,
        }
    return stored


def snapshot_left_out(*, snapshot) -> dict[str, dict] | None:
    """Return what the budget left out of each block: items (type, id, seq, tokens), the count
    of all that were, and the recent block's unread older messages as [first, last] or None;
    None when the snapshot did not record it (older contexts)."""
    stored = snapshot.manifest.get("left_out")
    if stored is None:
        return None
    return {
        name: {
            "count": block["count"],
            "older": block.get("older"),
            "items": [
                {"type": type_, "id": id_, "seq": seq, "tokens": tokens}
                for type_, id_, seq, tokens in zip(
                    block["type"], block["id"], block["seq"], block["tokens"], strict=True
                )
            ],
        }
        for name, block in stored.items()
    }
