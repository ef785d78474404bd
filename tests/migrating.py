"""Migrate the test database back, for the tests of a data migration (the back_to_latest
fixture in tests/conftest.py migrates it forward again)."""

from django.db import connection
from django.db.migrations.executor import MigrationExecutor


def migrate(targets):
    """Migrate to targets and return the models as they were then (later columns absent)."""
    return MigrationExecutor(connection).migrate(targets).apps
