"""Fuse a scope's candidate lists by per-query normalised scores instead of by rank.

score = Σ_signal w_signal · n_signal / (k + 1)  +  the recency bonus of rank fusion

Rank fusion throws away how far apart the candidates are: a message that holds every word of
the question and one that holds a single common word are first and second alike. Normalised
scores keep those distances, for the kinds listed in FusionWeights.normalized_kinds (the
labelled set decides which kinds gain from it).

n is a min-max normalisation within this query's list: n = (raw − floor) / (best − floor),
clamped to [0, 1]. Min-max rather than z-score: the lists are cut at the candidate depth, not
samples of a distribution, and a full-text list often holds one to five items, where a mean and
deviation say little (and nothing at all for one item); z-scores are unbounded too, while n ≤ 1
lets the result sit on the scale of rank fusion: n = 1, the best of a signal, is worth w / (k + 1)
as first place is there, so the recency bonus (w_recency / (k + 1) at most) keeps its weight and
the kinds fused either way merge by comparable scores.

floor is what an item outside the list scores, so that an item one signal did not find takes
n = 0 for it, the same as that floor:
- full text: 0, since an item without any of the query's words scores nothing, and the list's
  weakest match still holds a word;
- vectors: the list's last similarity, since every item has one and those not listed are at
  most that similar.
When the best equals the floor (a single candidate, or all equal), every listed item takes 1.
"""

from datetime import datetime

from apps.search.fusion import Fused, FusionWeights, with_recency

# The signals whose absent items score 0; the others are cut from a score every item has.
_ZERO_FLOOR = {"lexical"}


def fuse_normalized(
    ranked: dict[str, list[tuple[int, float]]],
    created_at: dict[int, datetime],
    now: datetime,
    weights: FusionWeights,
) -> list[Fused]:
    """Return every candidate of the ranked lists, best first, scored by normalised scores."""
    fused: dict[int, Fused] = {}
    for signal, candidates in ranked.items():
        if not candidates:
            continue
        weight = getattr(weights, f"normalized_{signal}")
        best = max(raw for _, raw in candidates)
        floor = 0.0 if signal in _ZERO_FLOOR else min(raw for _, raw in candidates)
        spread = best - floor
        for rank, (item_id, raw) in enumerate(candidates, start=1):
            normal = min(1.0, max(0.0, (raw - floor) / spread)) if spread > 0 else 1.0
            entry = fused.setdefault(item_id, Fused(item_id))
            entry.score += weight * normal / (weights.k + 1)
            entry.signals[signal] = {
                "rank": rank,
                "score": round(raw, 6),
                "normalized": round(normal, 6),
            }
    return with_recency(fused, created_at, now, weights)
