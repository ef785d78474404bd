"""Build Django's DATABASES entry from DATABASE_URL, with the embedded SQLite default."""

from pathlib import Path

import dj_database_url


def database_from_url(url: str, *, data_dir: Path, busy_timeout: int) -> dict:
    """Return the default database; unset URL means the SQLite file in the data directory."""
    if not url:
        url = f"sqlite:///{data_dir / 'memory_console.sqlite3'}"
    config = dj_database_url.parse(url, conn_max_age=60, conn_health_checks=True)
    if config["ENGINE"] == "django.db.backends.sqlite3":
        # Kept open between requests like PostgreSQL's: a new SQLite connection reads the whole
        # schema before its first query, ~3 ms on every request (a file handle per thread).
        config["CONN_MAX_AGE"] = 600
        config["OPTIONS"] = {
            # WAL lets readers run beside the single writer; NORMAL sync is durable under WAL.
            # secure_delete zeroes the pages deleted rows leave free, so a forgotten end user's
            # words cannot be read back from the file (apps/core/database.py truncates the WAL).
            "init_command": (
                "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA secure_delete=ON;"
            ),
            # Every transaction takes the write lock up front, so a writer never fails halfway
            # through with SQLITE_BUSY after reading; it waits on the busy timeout instead.
            "transaction_mode": "IMMEDIATE",
            "timeout": busy_timeout,
        }
        # Tests run against a file too: an in-memory database cannot serve concurrent writers.
        name = Path(config["NAME"])
        config["TEST"] = {"NAME": str(name.with_name(f"test_{name.name}"))}
    return config
