"""DATABASE_URL parsing, and the SQLite settings that let several workers share one file."""

import sqlite3
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection, transaction

from memory_console.database import database_from_url


def test_a_sqlite_url_with_an_absolute_path_uses_that_file_and_waits_for_the_lock():
    config = database_from_url(
        "sqlite:////srv/memory/db.sqlite3", data_dir=Path("/unused"), busy_timeout=7
    )

    assert config["ENGINE"] == "django.db.backends.sqlite3"
    assert config["NAME"] == "/srv/memory/db.sqlite3"
    assert config["CONN_MAX_AGE"] == 600  # kept open: a new connection re-reads the schema
    assert config["OPTIONS"]["timeout"] == 7
    assert config["OPTIONS"]["transaction_mode"] == "IMMEDIATE"
    assert "PRAGMA journal_mode=WAL" in config["OPTIONS"]["init_command"]
    assert config["TEST"] == {"NAME": "/srv/memory/test_db.sqlite3"}


def test_a_postgres_url_is_split_into_its_parts_with_persistent_checked_connections():
    config = database_from_url(
        "postgres://memory:s3cret@db.internal:5433/console",
        data_dir=Path("/unused"),
        busy_timeout=7,
    )

    assert config["ENGINE"] == "django.db.backends.postgresql"
    assert (config["NAME"], config["USER"], config["PASSWORD"]) == ("console", "memory", "s3cret")
    assert (config["HOST"], config["PORT"]) == ("db.internal", 5433)
    assert (config["CONN_MAX_AGE"], config["CONN_HEALTH_CHECKS"]) == (60, True)
    assert "timeout" not in config.get("OPTIONS", {})
    assert "TEST" not in config


def test_an_unset_url_means_the_sqlite_file_in_the_data_directory(tmp_path):
    config = database_from_url("", data_dir=tmp_path, busy_timeout=30)

    assert config["ENGINE"] == "django.db.backends.sqlite3"
    assert config["NAME"] == str(tmp_path / "memory_console.sqlite3")
    assert config["TEST"] == {"NAME": str(tmp_path / "test_memory_console.sqlite3")}
    assert config["OPTIONS"]["timeout"] == 30


@pytest.fixture
def sqlite_only():
    if connection.vendor != "sqlite":
        pytest.skip(f"PRAGMAs are SQLite's; DATABASE_URL selects {connection.vendor} here")


def _pragma(name: str):
    with connection.cursor() as cursor:
        cursor.execute(f"PRAGMA {name}")
        return cursor.fetchone()[0]


def test_the_live_sqlite_connection_is_in_wal_mode_with_the_busy_timeout(db, sqlite_only):
    timeout_seconds = settings.DATABASES["default"]["OPTIONS"]["timeout"]

    assert _pragma("journal_mode") == "wal"
    assert _pragma("busy_timeout") == timeout_seconds * 1000
    assert _pragma("synchronous") == 1  # NORMAL
    assert _pragma("secure_delete") == 1  # freed pages zeroed: forgotten text is not kept


def test_a_sqlite_transaction_takes_the_write_lock_before_it_writes(transactional_db, sqlite_only):
    # Another connection that will not wait: it gets the write lock only if nobody holds it.
    other = sqlite3.connect(connection.settings_dict["NAME"], timeout=0, isolation_level=None)
    try:
        with transaction.atomic():
            _pragma("journal_mode")  # a read; a DEFERRED transaction would hold no lock yet
            with pytest.raises(sqlite3.OperationalError, match="database is locked"):
                other.execute("BEGIN IMMEDIATE")
        other.execute("BEGIN IMMEDIATE")  # free again once the transaction ends
        other.execute("ROLLBACK")
    finally:
        other.close()
