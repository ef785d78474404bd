"""The time window boost: messages inside the period a query names ("last week", "in May 2023")
rank higher. A boost, not a filter: a question's date may be loose, and a good match just
outside its period should still be found.
"""

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from apps.search.backends import backend
from apps.search.fusion import Fused, FusionWeights
from apps.search.models import ItemKind
from apps.search.scope import Scope
from apps.search.temporal import find_time_phrase


@dataclass(frozen=True)
class Window:
    """The period a query names, as UTC instants [start, end), and its days as shown."""

    start: datetime
    end: datetime
    shown: list[str]

    def boost(self, entry: Fused, created: datetime, weights: FusionWeights) -> None:
        """Add weights.temporal_boost to the entry if created inside; say so in its signals."""
        inside = 1.0 if self.start <= created < self.end else 0.0
        entry.score += weights.temporal_boost * inside
        entry.signals["time"] = {"window": self.shown, "score": inside}


def query_window(
    *,
    scope: Scope,
    query: str,
    fused: list[Fused],
    created: dict[int, datetime],
    weights: FusionWeights,
) -> Window | None:
    """Return the period the query names, for the boost of a message scope's candidates.

    1. Only messages, and only a query that names a period (read from its text, no query).
    2. A period without a year ("in May", "last week") is placed against the day of the
       scope's latest message: a conversation's "last week" is the week before its own latest
       message, whenever the question is asked. That is the created_at of the scope's newest
       item, read by the scope's index (one row), or a candidate's if later: history
       back-filled after newer messages makes the newest item an older one, and a max() over
       created_at would read the whole scope.
    """
    if scope.kind != ItemKind.MESSAGE or not weights.temporal_boost or not fused:
        return None
    phrase = find_time_phrase(query)
    if phrase is None:
        return None
    anchor = None
    if phrase.needs_anchor:
        latest = max(created[entry.item_id] for entry in fused)
        newest = backend().newest_created(scope)
        if newest is not None:
            latest = max(latest, datetime.fromtimestamp(newest, UTC))
        anchor = latest.date()
    try:
        days = phrase.window(anchor)
        if days is None:
            return None
        return Window(
            start=_day_start(days[0]),
            end=_day_start(days[1] + timedelta(days=1)),
            shown=[days[0].isoformat(), days[1].isoformat()],
        )
    except (OverflowError, ValueError):
        # A period placed against a message dated at the calendar's edge (year 1 or 9999)
        # runs off it: the query has no window, as one whose period cannot be placed.
        return None


def boost_in_window(
    *, fused: list[Fused], created: dict[int, datetime], window: Window, weights: FusionWeights
) -> list[Fused]:
    """Add weights.temporal_boost to the candidates created inside the window, best first.

    Every candidate gets the signal `time` with the window (first and last day, UTC) and its
    score, 1 inside and 0 outside. Only the candidates are read, never the scope.
    """
    for entry in fused:
        window.boost(entry, created[entry.item_id], weights)
    return sorted(fused, key=lambda entry: (-entry.score, -entry.item_id))


def _day_start(day: date) -> datetime:
    return datetime.combine(day, time.min, UTC)
