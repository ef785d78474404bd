"""Liveness with the state of the database and the broker."""

from django.conf import settings
from django.db import connection


def database_status() -> str:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:  # any failure means the database is unusable
        return f"error: {exc.__class__.__name__}"
    return "ok"


def broker_status() -> str:
    if not settings.CELERY_BROKER_URL:
        return "not configured"
    from kombu import Connection

    try:
        with Connection(settings.CELERY_BROKER_URL, connect_timeout=2) as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
    except Exception as exc:  # unreachable, refused, bad credentials: all mean "down"
        return f"error: {exc.__class__.__name__}"
    return "ok"
