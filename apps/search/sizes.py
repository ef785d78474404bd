"""How many rows a scope has, up to a cap, counted at most every 30 s per process.

Sizes only choose between query plans that return the same rows, so a recent count will do.
"""

import time

from django.db import connection

_SECONDS = 30.0
_sizes: dict[tuple, tuple[int, float]] = {}


def capped_count(cursor, table: str, alias: str, where: str, params: list, cap: int) -> int:
    """Return the number of rows of `table AS alias` meeting where, or cap + 1 if more."""
    key = (connection.settings_dict["NAME"], table, where, tuple(map(_hashable, params)), cap)
    known = _sizes.get(key)
    if known is not None and time.monotonic() - known[1] < _SECONDS:
        return known[0]
    cursor.execute(
        f"SELECT count(*) FROM (SELECT 1 FROM {table} {alias} WHERE {where} LIMIT %s) s",
        [*params, cap + 1],
    )
    size = cursor.fetchone()[0]
    if len(_sizes) > 1000:  # scopes come and go; the dict must not grow without end
        _sizes.clear()
    _sizes[key] = (size, time.monotonic())
    return size


def _hashable(value):
    return tuple(value) if isinstance(value, list) else value
