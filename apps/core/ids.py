"""Time-ordered UUIDs (version 7): unique like uuid4, and sorted by creation time."""

import os
import time
import uuid
from datetime import datetime


def uuid7() -> uuid.UUID:
    """Return a UUIDv7: 48 bits of Unix milliseconds, then 74 random bits."""
    millis = time.time_ns() // 1_000_000
    rand = int.from_bytes(os.urandom(10), "big")
    value = (millis & ((1 << 48) - 1)) << 80
    value |= 0x7 << 76  # version
    value |= ((rand >> 62) & 0xFFF) << 64  # rand_a, 12 bits
    value |= 0b10 << 62  # RFC 4122 variant
    value |= rand & ((1 << 62) - 1)  # rand_b, 62 bits
    return uuid.UUID(int=value)


def uuid7_floor(moment: datetime) -> uuid.UUID:
    """Return the smallest UUIDv7 of the millisecond of moment: ids of rows stored since then
    are at least this (a time-ordered id says when a row was stored, whatever its own dates)."""
    millis = int(moment.timestamp() * 1000)
    return uuid.UUID(int=(millis << 80) | (0x7 << 76) | (0b10 << 62))
