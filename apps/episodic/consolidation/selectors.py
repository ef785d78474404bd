"""Reads of consolidation progress, for the console's thread page."""

from dataclasses import dataclass
from datetime import datetime, timedelta

from apps.episodic.consolidation.batches import consolidation_boundary
from apps.episodic.models import ConsolidationProgress, EntryKind, MemoryEntry
from apps.memconfig.selectors import config_effective


@dataclass(frozen=True)
class ConsolidationState:
    consolidated_up_to: int  # the last consolidated seq (0: none yet)
    entries_made: int
    entries_live: int  # of those, still pending or approved
    waiting: int  # messages outside the short-term window not consolidated yet
    short_term_limit: int
    interval_seconds: int
    last_run_at: datetime | None
    next_run_at: datetime | None


def consolidation_state(*, thread) -> ConsolidationState:
    """Return how far the thread is consolidated, what it made, and what waits."""
    config = config_effective(agent=thread.agent)
    progress = ConsolidationProgress.objects.filter(thread=thread).first()
    up_to = progress.consolidated_up_to if progress else 0
    last_run_at = progress.last_run_at if progress else None
    interval = config["consolidation_interval_seconds"]
    live = MemoryEntry.objects.filter(
        thread=thread, kind=EntryKind.CONSOLIDATED, status__in=["pending", "approved"]
    )
    return ConsolidationState(
        consolidated_up_to=up_to,
        entries_made=progress.entries_made if progress else 0,
        entries_live=live.count(),
        waiting=max(0, consolidation_boundary(thread=thread, config=config) - up_to),
        short_term_limit=config["short_term_limit"],
        interval_seconds=interval,
        last_run_at=last_run_at,
        next_run_at=last_run_at + timedelta(seconds=interval) if last_run_at else None,
    )
