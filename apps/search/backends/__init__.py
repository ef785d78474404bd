"""The search backends: where the search's SQL lives, one module per database.

Both modules offer the same functions, returning plain Candidate rows:

    lexical_candidates(scope, terms, limit) -> list[Candidate]
    vector_candidates(scope, model, dims, vector, limit) -> list[Candidate]
    ensure_vector_index(dims) -> bool        (manage.py vector_index; never from a job)
    vector_index_missing(dims) -> bool
    lexical_index_compact() -> None
    newest_created(scope) -> float | None

Candidates bring their item's created_at, so ranking reads nothing else of the items.
"""

from types import ModuleType

from django.db import connection

from apps.search.backends import postgres, sqlite
from apps.search.backends.common import Candidate

__all__ = ["Candidate", "backend"]


def backend() -> ModuleType:
    """Return the backend module of the database in use."""
    return postgres if connection.vendor == "postgresql" else sqlite
