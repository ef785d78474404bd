"""SQLite search: full-text candidates by FTS5, scored like BM25 within the scope; vector
candidates by NumPy over each scope's float32 rows, cached per process."""

import threading
from collections import OrderedDict

import numpy as np
from django.db import connection

from apps.search.backends.common import (
    Candidate,
    Span,
    bm25_candidates,
    capped_count,
    db_uuid,
    epoch_seconds,
    matches_per_term,
    scope_where,
)
from apps.search.query import Term, as_term, fts5_match
from apps.search.scope import Scope

# A scope's item count (counted at most every 30 s) is exact up to this; its id span beyond.
_COUNT_CAP = 100_000


def lexical_candidates(scope: Scope, terms: list[Term | str], limit: int) -> list[Candidate]:
    """Return up to limit candidates matching any of the terms, best first."""
    if not terms:
        return []
    where, params = scope_where(scope, "si")
    return _newest_and_scored(where, params, terms, limit)


def vector_candidates(
    scope: Scope, model: str, dims: int, vector: np.ndarray, limit: int
) -> list[Candidate]:
    """Return up to limit candidates by cosine similarity to vector, most similar first."""
    where, params = scope_where(scope, "e")
    where = f"e.model = %s AND e.dims = {int(dims)} AND {where}"
    return _nearest(scope, where, [model, *params], vector, limit)


def newest_created(scope: Scope) -> float | None:
    """Return the created_at (epoch seconds) of the scope's newest item, by its id index."""
    where, params = scope_where(scope, "si")
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {epoch_seconds('si.created_at')} FROM search_searchitem si "
            f"WHERE {where} ORDER BY si.id DESC LIMIT 1",
            params,
        )
        row = cursor.fetchone()
    return row[0] if row else None


def ensure_vector_index(dims: int) -> bool:
    """SQLite has no vector index: every scope is scanned with NumPy (none is built)."""
    return False


def vector_index_missing(dims: int) -> bool:
    """Never: SQLite has no vector index to miss."""
    return False


def lexical_index_compact() -> None:
    """Merge FTS5's segments into one, dropping the entries of deleted rows.

    FTS5 records a deletion as a marker in a new segment and keeps the old segment, the
    deleted words included, until segments merge: forgetting must not leave them there.
    """
    with connection.cursor() as cursor:
        cursor.execute("INSERT INTO search_item_fts(search_item_fts) VALUES ('optimize')")


def _newest_and_scored(where, params, terms, limit) -> list[Candidate]:
    """Score each term's newest matches in the scope, reading only the scope's span.

    FTS5 cannot filter by scope inside its index, so a common word would have every match in
    the table read before the join drops other scopes' rows. A rowid range is a filter FTS5
    applies inside its doclists; the scope's lowest and highest item ids bound that range, so a
    thread or a small tenant reads little more than its own matches. Each term then brings its
    newest matches (matches_per_term: at most SEARCH_LEXICAL_CANDIDATES), FTS5 walking its
    doclist backwards and stopping.

    A term's other forms (its German and Spanish stems as prefixes, query.py) are asked for
    only when the word itself has fewer than its quota of matches in the scope. FTS5 answers a
    prefix by merging the doclists of every indexed word that starts with it, over the whole
    index, before the rowid range applies: on bench/context.py's data (111,000 items) a common
    word with its prefix took 2-5 ms per scope against 0.3-0.9 ms for the word alone, and a
    query of common words without stop words (so with both languages' stems) spent 80 % of its
    full-text time there. A word that fills its quota by itself is common in the scope: the
    forms that add would only be more of what is already found. A rare word, or a German or
    Spanish word the English index keeps whole ("rechnungen"), still gets them.

    FTS5's own bm25() is not used: it takes a word's frequency from the whole index, every
    tenant's, so one tenant's writing would move another's ranking, and counting it costs as
    much as the word is common (5.7 ms for a word in 125,000 of 300,000 items, against 0.2 ms
    for the same 200 rows unscored). bm25_scores() takes the scope's own figures instead.
    """
    created: dict[int, float] = {}
    per_term_limit = matches_per_term(limit, len(terms))
    with connection.cursor() as cursor:
        # Two ordered LIMIT 1 probes walk an index from each end; MIN()/MAX() together read
        # every row of the scope.
        first = f"SELECT si.id FROM search_searchitem si WHERE {where} ORDER BY si.id"
        cursor.execute(f"SELECT ({first} LIMIT 1), ({first} DESC LIMIT 1)", [*params, *params])
        low, high = cursor.fetchone()
        if low is None:
            return []
        newest = f"""
            SELECT si.id, length(si.content), {epoch_seconds("si.created_at")}
            FROM search_item_fts f JOIN search_searchitem si ON si.id = f.rowid
            WHERE search_item_fts MATCH %s AND f.rowid BETWEEN %s AND %s AND {where}
            ORDER BY f.rowid DESC LIMIT %s
        """

        def newest_matching(match: str) -> list[tuple]:
            cursor.execute(newest, [match, low, high, *params, per_term_limit])
            return cursor.fetchall()

        per_term = []
        for term in map(as_term, terms):
            rows = newest_matching(fts5_match([term.word]))
            if term.prefixes and len(rows) < per_term_limit:
                rows = newest_matching(fts5_match([term]))
            per_term.append([(item_id, length) for item_id, length, _ in rows])
            created.update((item_id, at) for item_id, _, at in rows)
        if not any(per_term):
            return []
        size = capped_count(cursor, "search_searchitem", "si", where, params, _COUNT_CAP)
    span = Span(low, high, size if size <= _COUNT_CAP else high - low + 1)
    return bm25_candidates(per_term, span, per_term_limit, created, limit)


def _sqlite_stamp(cursor, scope: Scope, where: str, params: list) -> tuple:
    """Return what changes whenever the scope's vectors may have changed.

    Migration 0003 keeps a counter per (project, kind) with triggers; reading it is one row,
    where summarising the scope's rows would read every vector in it. Without a project (an
    operator searching everything) the rows are summarised after all.
    """
    if scope.project_id is None:
        cursor.execute(
            f"SELECT count(*), max(e.id), total(e.id) FROM search_itemembedding e WHERE {where}",
            params,
        )
        return tuple(cursor.fetchone())
    cursor.execute(
        "SELECT version FROM search_vector_stamp WHERE project_id = %s AND kind = %s",
        [db_uuid(scope.project_id), scope.kind],
    )
    row = cursor.fetchone()
    return ("version", row[0] if row else 0)


class _Matrix:
    def __init__(self, stamp, ids, vectors, created):
        self.stamp, self.ids, self.vectors, self.created = stamp, ids, vectors, created


# Loading every vector of a large scope from SQLite on each query would dominate its cost, so
# each process keeps the latest scopes' matrices and reloads one only when its rows changed.
_cache: OrderedDict[tuple, _Matrix] = OrderedDict()
_cache_lock = threading.Lock()
_CACHE_SCOPES = 32


def _nearest(scope, where, params, query, limit) -> list[Candidate]:
    with connection.cursor() as cursor:
        stamp = _sqlite_stamp(cursor, scope, where, params)
        key = (connection.settings_dict["NAME"], where, tuple(params))
        with _cache_lock:
            matrix = _cache.get(key)
        if matrix is None or matrix.stamp != stamp:
            # Items keep their created_at, so it is loaded (as seconds) with their vectors.
            cursor.execute(
                f"SELECT e.item_id, e.vector, {epoch_seconds('si.created_at')} "
                "FROM search_itemembedding e JOIN search_searchitem si ON si.id = e.item_id "
                f"WHERE {where}",
                params,
            )
            rows = cursor.fetchall()
            ids = np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))
            vectors = np.frombuffer(b"".join(row[1] for row in rows), dtype=np.float32)
            created = np.fromiter((row[2] for row in rows), dtype=np.float64, count=len(rows))
            vectors = vectors.reshape(len(rows), -1) if rows else vectors
            matrix = _Matrix(stamp, ids, vectors, created)
            with _cache_lock:
                _cache[key] = matrix
                _cache.move_to_end(key)
                while len(_cache) > _CACHE_SCOPES:
                    _cache.popitem(last=False)
    if not len(matrix.ids):
        return []
    similarities = matrix.vectors @ np.asarray(query, dtype=np.float32)
    count = min(limit, len(similarities))
    top = np.argpartition(-similarities, count - 1)[:count]
    top = top[np.argsort(-similarities[top])]
    return [
        Candidate(int(matrix.ids[i]), float(similarities[i]), float(matrix.created[i])) for i in top
    ]
