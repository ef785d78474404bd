"""Stored timestamps read as seconds since the epoch, by the database itself.

The recency bonus needs every candidate's created_at. Drivers' conversion of a stored timestamp
is a Python call per value (Django's timestamptz loader on PostgreSQL, text parsing on SQLite);
a float is not. Precise to well under a millisecond, plenty for a bonus counted in days.
"""

from datetime import UTC, datetime

from django.db import connection


def epoch_seconds(column: str) -> str:
    """Return SQL for `column` (a timestamp) as a float of seconds since the epoch."""
    if connection.vendor == "postgresql":
        return f"extract(epoch FROM {column})::float8"
    # SQLite stores UTC text; julianday() reads it, counted from the epoch's day.
    return f"(julianday({column}) - 2440587.5) * 86400.0"


def from_epoch(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)
