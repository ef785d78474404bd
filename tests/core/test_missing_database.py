"""A database that cannot be used stops manage.py with one line saying how to fix it."""

import uuid

import pytest
from django.db import connection

from tests.core.servers import manage, server_env


@pytest.fixture
def missing_postgres_url() -> tuple[str, str]:
    """A URL to the test run's PostgreSQL server naming a database that does not exist."""
    if connection.vendor != "postgresql":
        pytest.skip(f"needs a PostgreSQL server; DATABASE_URL selects {connection.vendor} here")
    config = connection.settings_dict
    name = f"missing_{uuid.uuid4().hex[:12]}"
    host, port = config["HOST"] or "localhost", config["PORT"] or 5432
    user = config["USER"] + (f":{config['PASSWORD']}" if config["PASSWORD"] else "")
    return (
        f"postgres://{user}@{host}:{port}/{name}",
        f"-h {host} -p {port} -U {config['USER']} {name}",
    )


@pytest.mark.parametrize("command", [["migrate", "--noinput"], ["serve", "--bind", "127.0.0.1:0"]])
def test_a_missing_postgres_database_fails_in_one_line_naming_createdb(
    missing_postgres_url, tmp_path, command
):
    url, createdb_arguments = missing_postgres_url

    result = manage(*command, env=server_env(tmp_path, DATABASE_URL=url))

    assert result.returncode == 1
    assert result.stderr.count("\n") == 1, result.stderr  # one line, no traceback
    assert f"`createdb {createdb_arguments}`" in result.stderr
    assert "does not exist" in result.stderr


def test_a_sqlite_file_in_a_missing_folder_fails_in_one_line(tmp_path):
    path = tmp_path / "no-such-folder" / "db.sqlite3"

    result = manage(
        "migrate", "--noinput", env=server_env(tmp_path, DATABASE_URL=f"sqlite:///{path}")
    )

    assert result.returncode == 1
    assert result.stderr.count("\n") == 1, result.stderr
    assert f"The SQLite database {path} cannot be opened" in result.stderr
