"""Fuse ranked candidate lists into one ranking: reciprocal rank fusion plus a recency bonus.

score = Σ_signal weight / (k + rank)  +  w_recency · 2^(−age / half-life) / (k + 1)

A result carries each signal's rank and raw score, so its place can be explained. A message
inside the period a query names gains temporal_boost after fusion (time_boost.py).
"""

from dataclasses import dataclass, field
from datetime import datetime


@dataclass(frozen=True)
class FusionWeights:
    lexical: float = 0.5
    vector: float = 1.0
    recency: float = 0.05
    half_life_days: float = 30.0
    k: int = 5
    # Added to a message inside the period the query names (time_boost.py): 0.08 is about what
    # the first lexical rank brings (0.5 / (5 + 1)), so a message of that period and with the
    # query's words comes before an equal one of another period, not before a better match.
    # On the labelled set's 37 temporal questions (full text alone, SQLite, stored dates) MRR
    # was 0.78 at 0, 0.845 at 0.04, 0.847 at 0.08 and at 0.16; not cross-validated.
    temporal_boost: float = 0.08


@dataclass
class Fused:
    item_id: int
    score: float = 0.0
    signals: dict = field(default_factory=dict)


def fuse(
    ranked: dict[str, list[tuple[int, float]]],
    created_at: dict[int, datetime],
    now: datetime,
    weights: FusionWeights,
) -> list[Fused]:
    """Return every candidate of the ranked lists, best first, with its signal breakdown."""
    fused: dict[int, Fused] = {}
    for signal, candidates in ranked.items():
        weight = getattr(weights, signal)
        for rank, (item_id, raw) in enumerate(candidates, start=1):
            entry = fused.setdefault(item_id, Fused(item_id))
            entry.score += weight / (weights.k + rank)
            entry.signals[signal] = {"rank": rank, "score": round(raw, 6)}
    for item_id in [item_id for item_id in fused if item_id not in created_at]:
        del fused[item_id]  # deleted since it was found
    for entry in fused.values():
        age_days = max(0.0, (now - created_at[entry.item_id]).total_seconds() / 86400)
        freshness = 0.5 ** (age_days / weights.half_life_days) if weights.half_life_days else 0
        entry.score += weights.recency * freshness / (weights.k + 1)
        entry.signals["recency"] = {"age_days": round(age_days, 3), "score": round(freshness, 6)}
    return sorted(fused.values(), key=lambda e: (-e.score, -e.item_id))
