"""What the budget left out of a context, kept in its snapshot so an operator can see it.

The assembly hands snapshot_store each block's candidates that were not kept (left_out_pieces);
the manifest stores them column by column, as it stores the kept items.
"""

from apps.context.render import Piece

# Left-out pieces listed per block: the rest are counted. A long thread's cut history is a few
# ranges of messages, so this bounds a manifest without hiding what matters.
LEFT_OUT_LISTED = 500


def left_out_pieces(
    *, candidates: dict[str, list[Piece]], recall: list, kept: dict[str, list[Piece]]
) -> dict[str, list[Piece]]:
    """Return, per block, the candidates the budget left out: those of each block not kept, and
    for recall the hits (each a stretch's `hit`) not shown, in the candidates' order."""
    out = {}
    for name, pieces in candidates.items():
        shown = {(piece.type, piece.id) for piece in kept.get(name, [])}
        cut = [piece for piece in pieces if (piece.type, piece.id) not in shown]
        if cut:
            out[name] = cut
    seqs = {piece.seq for piece in kept.get("recall", [])}
    hits = [stretch.hit for stretch in recall if stretch.hit.seq not in seqs]
    if hits:
        out["recall"] = hits
    return out


def manifest_left_out(left_out: dict[str, list[Piece]]) -> dict[str, dict]:
    """Return the left-out pieces as the manifest stores them, column by column per block:
    {"type", "id", "seq", "tokens", "count"} (count: how many were left out, all listed or not)."""
    stored = {}
    for name, pieces in left_out.items():
        listed = pieces[:LEFT_OUT_LISTED]
        stored[name] = {
            "type": [piece.type for piece in listed],
            "id": [piece.id for piece in listed],
            "seq": [piece.seq for piece in listed],
            "tokens": [piece.tokens for piece in listed],
            "count": len(pieces),
        }
    return stored


def snapshot_left_out(*, snapshot) -> dict[str, dict] | None:
    """Return what the budget left out of each block, as items (type, id, seq, tokens) with the
    count of all that were; None when the snapshot did not record it (older contexts)."""
    stored = snapshot.manifest.get("left_out")
    if stored is None:
        return None
    return {
        name: {
            "count": block["count"],
            "items": [
                {"type": type_, "id": id_, "seq": seq, "tokens": tokens}
                for type_, id_, seq, tokens in zip(
                    block["type"], block["id"], block["seq"], block["tokens"], strict=True
                )
            ],
        }
        for name, block in stored.items()
    }
