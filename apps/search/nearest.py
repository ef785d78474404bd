"""Vector candidates: pgvector on PostgreSQL, NumPy over cached float32 rows on SQLite."""

import threading
from collections import OrderedDict

import numpy as np
from django.conf import settings
from django.db import connection, transaction

from apps.search.fields import vector_literal
from apps.search.scope import Scope, db_uuid
from apps.search.sizes import capped_count
from apps.search.times import epoch_seconds

# pgvector cannot build an HNSW index over more dimensions than this.
HNSW_MAX_DIMS = 2000


def vector_candidates(
    scope: Scope,
    model: str,
    dims: int,
    query: np.ndarray,
    limit: int,
    *,
    seen_at: dict[int, float] | None = None,
) -> list[tuple[int, float]]:
    """Return up to limit (item id, cosine similarity) pairs, most similar first.

    seen_at, when given, receives each returned item's created_at in seconds since the epoch.
    """
    where, params = scope.where("e")
    # dims is inlined (an int) so the planner can match the partial HNSW index on it.
    where = f"e.model = %s AND e.dims = {int(dims)} AND {where}"
    params = [model, *params]
    if connection.vendor == "postgresql":
        rows = _postgres(where, params, dims, query, limit)
    else:
        rows = _sqlite(scope, where, params, query, limit)
    if seen_at is not None:
        seen_at.update((item_id, at) for item_id, _, at in rows)
    return [(item_id, similarity) for item_id, similarity, _ in rows]


def _postgres(where, params, dims, query, limit):
    """Return (item id, similarity, created_at seconds) of the nearest rows, nearest first."""
    literal = vector_literal(query)
    with connection.cursor() as cursor:
        if _scope_size(cursor, where, params) <= settings.SEARCH_EXACT_SCAN_ROWS:
            # Small scopes are scanned exactly: always the true top-k, and fast. The column is
            # compared without the cast to vector(dims) that the HNSW index is built on, so the
            # planner cannot pick that index, and no row is cast (a third of the scan's time);
            # e.dims = dims already holds every row to the query's dimension.
            sql = f"""
                SELECT e.item_id, e.vector <=> %s::vector AS d FROM search_itemembedding e
                WHERE {where} ORDER BY d LIMIT %s
            """
            cursor.execute(_with_created(sql), [literal, *params, limit])
            rows = cursor.fetchall()
        else:
            # Large scopes use the HNSW index; iterative scans keep going until enough rows
            # pass the scope filter, so a filtered top-k is not cut short. The settings are
            # local to a transaction of this query's own (or a savepoint in the caller's).
            with transaction.atomic():
                cursor.execute(
                    "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), "
                    "set_config('hnsw.ef_search', %s, true)",
                    [str(max(100, limit * 2))],
                )
                distance = f"(e.vector::vector({dims}) <=> %s::vector({dims}))"
                sql = f"""
                    SELECT e.item_id, {distance} AS d FROM search_itemembedding e
                    WHERE {where} ORDER BY d LIMIT %s
                """
                cursor.execute(_with_created(sql), [literal, *params, limit])
                rows = cursor.fetchall()
    # relaxed_order may return neighbours slightly out of order, and the join any order at all.
    rows.sort(key=lambda row: row[1])
    return [(item_id, 1.0 - float(d), at) for item_id, d, at in rows]


def _with_created(nearest: str) -> str:
    """Return SQL that adds each neighbour's created_at (seconds, see times.py) to its row."""
    return (
        f"SELECT n.item_id, n.d, {epoch_seconds('si.created_at')} FROM ({nearest}) n "
        "JOIN search_searchitem si ON si.id = n.item_id"
    )


def _scope_size(cursor, where, params) -> int:
    """Return the scope's vector count up to SEARCH_EXACT_SCAN_ROWS + 1."""
    cap = settings.SEARCH_EXACT_SCAN_ROWS
    return capped_count(cursor, "search_itemembedding", "e", where, params, cap)


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


def _sqlite(scope, where, params, query, limit):
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
    return [(int(matrix.ids[i]), float(similarities[i]), float(matrix.created[i])) for i in top]
