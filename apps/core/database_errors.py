"""One line, instead of a traceback, for a configured database that cannot be used at all."""

from django.db import OperationalError, connection


def unusable_database_message(error: OperationalError) -> str | None:
    """Say what is wrong with the configured database and how to fix it, or return None.

    Only the mistakes of a first setup are recognised; anything else keeps its traceback.
    """
    config = connection.settings_dict
    name, text = config["NAME"], str(error)
    if connection.vendor == "postgresql" and f'database "{name}" does not exist' in text:
        host, port, user = config["HOST"] or "localhost", config["PORT"] or 5432, config["USER"]
        command = f"createdb -h {host} -p {port}" + (f" -U {user}" if user else "") + f" {name}"
        return (
            f'The PostgreSQL database "{name}" does not exist on {host}:{port}; '
            f"create it with `{command}` (or fix DATABASE_URL), then run this again."
        )
    if connection.vendor == "sqlite" and "unable to open database file" in text:
        return (
            f"The SQLite database {name} cannot be opened; make sure its folder exists and is "
            "writable (or fix DATABASE_URL / DATA_DIR), then run this again."
        )
    return None


# What a client is told to wait before trying again when the database was too busy: about one
# short background transaction, so a retry is likely to find the lock free.
BUSY_RETRY_AFTER_SECONDS = 5


def database_busy(error: BaseException | None) -> bool:
    """Return whether error is SQLite's "database is locked": the write lock was not free within
    the busy timeout (another writer held it). The request was fine; it can be sent again."""
    return isinstance(error, OperationalError) and "database is locked" in str(error)
