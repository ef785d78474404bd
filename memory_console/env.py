"""Typed readers for settings that come from the environment."""

import os
import re

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a whole number, got {raw!r}") from None


def env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return float(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number, got {raw!r}") from None


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be true or false, got {raw!r}")


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


# What DRF's throttles read (SimpleRateThrottle.parse_rate): a whole number, a slash, and a
# period known by its first letter, s, m, h or d ("600/min", "100/hours", "1/d").
_RATE = re.compile(r"\d+/[smhd][a-z]*")


def env_rate(name: str, default: str) -> str | None:
    """Return a request rate such as 600/min, or None (no limit) for an empty value."""
    raw = os.environ.get(name, default).strip()
    if not raw:
        return None
    if not _RATE.fullmatch(raw):
        raise ImproperlyConfigured(
            f"{name} must be a number of requests per s, min, hour or day, such as 600/min "
            f"(empty for no limit), got {raw!r}"
        )
    return raw
