"""PostgreSQL search: full-text candidates by tsvector + GIN, vector candidates by pgvector.

Full-text: each term's newest matches in a scope, at a bounded cost, scored by BM25 over the
scope's own figures as on SQLite (common.bm25_scores), so both backends rank alike.
The planner cannot cost "the newest N matches of a word in a scope" well: it guesses how many
of the scope's rows hold the word from table-wide statistics, and messages and knowledge chunks
share the table but not their vocabularies, so it was off by five times either way and picked
a plan that read every match (300 ms for three common words over 100k chunks). So the choice
is made here:

1. A scope of at most SEARCH_LEXICAL_SCAN items that is not a thread (an end user's entries,
   a small knowledge base; its size is counted at most every 30 s) is read whole by its own
   index, every term tested on each row, in one statement: a millisecond or two whatever the
   words. Left to the planner, a common word had it AND the scope with the word's GIN bitmap
   over the whole table (4 ms for one word of 12,000 matches, where the scope held 1,000
   rows). A thread has its own (thread, words) GIN index, which finds just its matches.
2. A scope of at most SEARCH_LEXICAL_WALK items (a thread, a small tenant) is left to the
   planner, one statement for all terms: every way of reading it is cheap.
3. In a larger scope, walk a sample of its newest items (4 times a term's quota, at most
   SEARCH_LEXICAL_SAMPLE) by its own index and test every term. A term with its quota of
   matches there (matches_per_term: at most SEARCH_LEXICAL_CANDIDATES) is done. For each
   other term the sample tells how often it occurs in this scope, so how far a walk would go
   for the missing matches; the planner's estimate of the term's matches in the whole table
   tells what the GIN index would read. The cheaper one is taken:
   - walk on by the scope's index, newest first, stopping at the missing count (the planner
     is told to: it would rather fetch and sort every match);
   - or take the term's matches from the GIN index alone, then filter and sort them.
"""

import json
import math
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.db import connection, transaction

from apps.search.backends.common import (
    Candidate,
    Span,
    bm25_candidates,
    capped_count,
    epoch_seconds,
    matches_per_term,
    recent_figure,
    scope_where,
)
from apps.search.fields import vector_literal
from apps.search.query import Term, as_term
from apps.search.scope import Scope

# pgvector cannot build an HNSW index over more dimensions than this.
HNSW_MAX_DIMS = 2000


def lexical_candidates(scope: Scope, terms: list[Term | str], limit: int) -> list[Candidate]:
    """Return up to limit candidates matching any of the terms, best first."""
    if not terms:
        return []
    per_term = matches_per_term(limit, len(terms))
    matches, span = newest_matches(scope, terms, per_term)
    if not matches:
        return []
    created = {match.item_id: match.created for match in matches}
    matched = [
        [(match.item_id, match.length) for match in matches if match.hits[index]][:per_term]
        for index in range(len(terms))
    ]
    return bm25_candidates(matched, span, per_term, created, limit)


def newest_created(scope: Scope) -> float | None:
    """Return the created_at (epoch seconds) of the scope's newest item, by its own index."""
    where, params, order = newest_first(scope, "si")
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {epoch_seconds('si.created_at')} FROM search_searchitem si "
            f"WHERE {where} ORDER BY {order} LIMIT 1",
            params,
        )
        row = cursor.fetchone()
    return row[0] if row else None


def newest_first(scope: Scope, alias: str) -> tuple[str, list, str]:
    """Return (conditions, params, ORDER BY) that read the scope newest first by its index.

    `ORDER BY id DESC` under equality conditions can also be served by walking the primary key
    backwards and filtering, and the planner takes that walk when it believes the scope is most
    of the table; if other scopes' rows are the newest, it reads all of them first. Comparing
    the scope's leading column with a one-element `= ANY(array)` selects the same rows but is no
    equality, so ordering by that column and then id can only come from the scope's own
    (column, ..., id) index, or a sort.
    """
    if scope.thread_id is not None:
        leading = "thread_id"  # index search_item_thread (thread, id)
    elif scope.single_knowledge_base is not None:
        leading = "knowledge_base_id"  # index search_item_kb (knowledge_base, id)
    elif scope.project_id is not None:
        leading = "project_id"  # index search_item_project_kind (project, kind, id)
    else:
        where, params = scope_where(scope, alias)
        return where, params, f"{alias}.id DESC"
    where, params = scope_where(scope, alias, leading=leading)
    return where, params, f"{alias}.{leading} DESC, {alias}.id DESC"


# Reading a match through the GIN index costs about this many items walked in order (a
# random heap page per match against consecutive rows; measured on messages and chunks).
_GIN_ROW_COST = 4
# Planner settings for the walk, local to its transaction: only the scope's index, in order.
_WALK_ONLY = ("enable_bitmapscan", "enable_seqscan", "enable_sort")


@dataclass
class Match:
    item_id: int
    hits: tuple[bool, ...]  # which terms the item contains
    created: float  # the item's created_at, in seconds since the epoch (for the recency bonus)
    length: int  # the item's text length in characters (BM25's length discount)


def newest_matches(
    scope: Scope, terms: list[Term | str], per_term: int
) -> tuple[list[Match], Span]:
    """Return the items among each term's per_term newest matches in the scope, newest first,
    and the scope's span (what BM25 weighs a term's matches against)."""
    query = _Query(scope, terms, per_term)
    with connection.cursor() as cursor:
        size = query.size(cursor)
        ends = query.ends(cursor)
        if scope.thread_id is None and size <= settings.SEARCH_LEXICAL_SCAN:
            found = {}
            query.add(found, query.scan(cursor))
            return query.newest_per_term(found), _span(ends, size, found)
        if size <= settings.SEARCH_LEXICAL_WALK:
            # A small scope: whatever the planner picks reads little, in one statement.
            found = {}
            query.add(found, _union(cursor, [query.planned(t) for t in query.tsqueries]))
            return query.newest_per_term(found), _span(ends, size, found)
        found, walked, lowest = query.sample(cursor)
        if lowest is None or walked < query.sample_size:  # the sample held the whole scope
            return query.newest_per_term(found), _span(ends, walked, found)
        # Beyond SEARCH_LEXICAL_WALK the scope is not counted: its items are as many as the
        # sample's density over the id span makes (other scopes' rows lie between them).
        spanned = _span(ends, size, [*found, lowest])
        low, high = spanned.low, spanned.high
        items = max(size, round(walked * (high - low + 1) / (high - lowest + 1)))
        walks, others = query.branches(cursor, found, walked, lowest)
        if walks:
            with _walk_only(cursor):
                query.add(found, _union(cursor, walks))
        if others:
            query.add(found, _union(cursor, others))
    return query.newest_per_term(found), _span((low, high), items, found)


def _span(ends: tuple[int | None, int | None], items: int, found) -> Span:
    """The scope's span from its ends, read before the statements that found its matches (the
    ids in found): each of those sees the rows committed meanwhile, so the span is widened to
    hold them all."""
    ids = [*found, *(end for end in ends if end is not None)]
    if not ids:
        return Span(0, 0, 0)
    return Span(min(ids), max(ids), max(items, len(found)))


@contextmanager
def _walk_only(cursor):
    """Set the planner to walk indexes in order, until the end of the block.

    Kept because the planner, left alone, fetched and sorted every match of a common word in a
    large scope: 300 ms for three common words over 100k knowledge chunks, against 20-30 ms
    walking the scope's index (bench/search.py, knowledge case; project case at 1M messages).
    Only the branches that must walk run under it, local to their own transaction.
    """
    calls = ", ".join(f"set_config('{name}', %s, true)" for name in _WALK_ONLY)
    if not connection.in_atomic_block:
        # The block's own transaction ends with it, and SET LOCAL with the transaction.
        with transaction.atomic():
            cursor.execute(f"SELECT {calls}", ["off"] * len(_WALK_ONLY))
            yield
        return
    # Inside a caller's transaction the settings would outlast the block: put them back.
    before = ", ".join(f"current_setting('{name}')" for name in _WALK_ONLY)
    cursor.execute(f"SELECT {before}, {calls}", ["off"] * len(_WALK_ONLY))
    previous = cursor.fetchone()[: len(_WALK_ONLY)]
    try:
        yield
    finally:
        cursor.execute(f"SELECT {calls}", list(previous))


class _Query:
    """The SQL of one search's full-text candidates in one scope."""

    def __init__(self, scope: Scope, terms: list[Term | str], per_term: int):
        self.count, self.per_term = len(terms), per_term
        # The sample reads 4 times a term's quota of newest items, at most SEARCH_LEXICAL_SAMPLE:
        # enough to hold the quota of a term in a quarter of the items, and to tell how far a
        # walk would go for the others. A context's knowledge (quota 50) reads 200 chunks
        # instead of 400 on every request.
        self.sample_size = min(settings.SEARCH_LEXICAL_SAMPLE, 4 * per_term)
        self.where, self.params, self.order = newest_first(scope, "si")
        # The same conditions over rows named c (params are the same).
        self.where_c, _, self.order_c = newest_first(scope, "c")
        self.tsqueries = [_tsquery(term) for term in terms]
        flags = ", ".join("c.tsv @@ to_tsquery('english', %s)" for _ in terms)
        # Every statement returns, per row c: id, a flag per term, created_at in seconds (the
        # recency bonus needs it; see times.py) and the text's length (BM25's).
        self.columns = f"c.id, {flags}, {epoch_seconds('c.created_at')}, length(c.content)"
        self.column_args = self.tsqueries

    def sample(self, cursor) -> tuple[dict[int, Match], int, int | None]:
        """Return the matches among the scope's newest items, how many were read, the oldest."""
        # The sample's rows come back if they match a term, and its oldest row always.
        sql = f"""
            SELECT {self.columns}, c.walked, c.lowest FROM (
                SELECT w.id, w.tsv, w.created_at, w.content, count(*) OVER () AS walked,
                    min(w.id) OVER () AS lowest
                FROM (
                    SELECT si.id, si.tsv, si.created_at, si.content FROM search_searchitem si
                    WHERE {self.where} ORDER BY {self.order} LIMIT %s
                ) w
            ) c WHERE c.tsv @@ to_tsquery('english', %s) OR c.id = c.lowest
        """
        any_term = " | ".join(self.tsqueries)
        cursor.execute(sql, [*self.column_args, *self.params, self.sample_size, any_term])
        rows = cursor.fetchall()
        if not rows:
            return {}, 0, None  # an empty scope
        found = {}
        self.add(found, rows)
        return found, rows[0][-2], rows[0][-1]

    def scan(self, cursor) -> list[tuple]:
        """Return the scope's rows that hold any term, read by the scope's own index.

        OFFSET 0 keeps the terms out of the inner scan, so the GIN index cannot be ANDed in.
        """
        sql = f"""
            SELECT {self.columns} FROM (
                SELECT si.id, si.tsv, si.created_at, si.content FROM search_searchitem si
                WHERE {self.where} OFFSET 0
            ) c WHERE c.tsv @@ to_tsquery('english', %s)
        """
        cursor.execute(sql, [*self.column_args, *self.params, " | ".join(self.tsqueries)])
        return cursor.fetchall()

    def ends(self, cursor) -> tuple[int | None, int | None]:
        """Return the scope's lowest and highest item ids, each read by the scope's index."""
        ascending = self.order.replace(" DESC", "")
        first = f"SELECT si.id FROM search_searchitem si WHERE {self.where} ORDER BY "
        cursor.execute(
            f"SELECT ({first}{ascending} LIMIT 1), ({first}{self.order} LIMIT 1)",
            [*self.params, *self.params],
        )
        return cursor.fetchone()

    def size(self, cursor) -> int:
        """Return the scope's row count, up to SEARCH_LEXICAL_WALK + 1 (cached for a while)."""
        walk = settings.SEARCH_LEXICAL_WALK
        return capped_count(cursor, "search_searchitem", "si", self.where, self.params, walk)

    def branches(self, cursor, found, walked: int, lowest: int):
        """Return the (SQL, args) that fetch each term's missing matches: walks, then others."""
        walks, others = [], []
        for index, tsquery in enumerate(self.tsqueries):
            hits = sum(1 for match in found.values() if match.hits[index])
            missing = self.per_term - hits
            if missing <= 0:
                continue
            # How far a walk would go to find the missing matches, at the sample's rate. A walk
            # no longer than the sample costs about what asking the planner does; a longer one
            # is taken only when the GIN index would read more. A word seen once in the sample
            # may have no other match: walking 19,600 chunks for it took 35 ms, where the index
            # held 3 (bench/context.py, knowledge of 100k chunks).
            distance = missing * walked / hits if hits else math.inf
            if distance <= walked or distance <= _GIN_ROW_COST * _table_matches(cursor, tsquery):
                walks.append(self._walk(tsquery, lowest, missing, distance))
            else:
                others.append(self._from_index(tsquery, lowest, missing))
        return walks, others

    def _walk(self, tsquery, lowest, missing, distance):
        sql = (
            f"(SELECT {self.columns} FROM ("
            f"SELECT si.id, si.tsv, si.created_at, si.content FROM search_searchitem si "
            f"WHERE {self.where} AND si.id < %s ORDER BY {self.order} LIMIT %s) c "
            f"WHERE c.tsv @@ to_tsquery('english', %s) LIMIT %s)"
        )
        # Twice the expected distance (at least SEARCH_LEXICAL_WALK): the sample's rate is only
        # an estimate, and the walk stops at the missing count anyway.
        limit = int(max(settings.SEARCH_LEXICAL_WALK, 2 * distance))
        return sql, [*self.column_args, *self.params, lowest, limit, tsquery, missing]

    def _from_index(self, tsquery, lowest, missing):
        # OFFSET 0 keeps the scope's conditions out of the inner scan, where the planner would
        # AND in a bitmap of the whole scope (100k entries to find a dozen matches).
        sql = (
            f"(SELECT {self.columns} FROM ("
            f"SELECT * FROM search_searchitem si "
            f"WHERE si.tsv @@ to_tsquery('english', %s) AND si.id < %s OFFSET 0) c "
            f"WHERE {self.where_c} ORDER BY c.id DESC LIMIT %s)"
        )
        return sql, [*self.column_args, tsquery, lowest, *self.params, missing]

    def planned(self, tsquery):
        """The term's newest matches, the way the planner chooses (for small scopes)."""
        sql = (
            f"(SELECT {self.columns} FROM search_searchitem c "
            f"WHERE c.tsv @@ to_tsquery('english', %s) AND {self.where_c} "
            f"ORDER BY {self.order_c} LIMIT %s)"
        )
        return sql, [*self.column_args, tsquery, *self.params, self.per_term]

    def add(self, found: dict[int, Match], rows) -> None:
        # The flags come as booleans; a row that matches no term (the sample's oldest) is left.
        end = 1 + self.count
        for row in rows:
            hits = row[1:end]
            if True in hits and row[0] not in found:
                found[row[0]] = Match(row[0], hits, row[end], row[end + 1] or 0)

    def newest_per_term(self, found: dict[int, Match]) -> list[Match]:
        """Keep the items that are among some term's per_term newest matches."""
        newest_first = sorted(found, reverse=True)
        keep = set()
        for index in range(self.count):
            matching = [item_id for item_id in newest_first if found[item_id].hits[index]]
            keep.update(matching[: self.per_term])
        return [found[item_id] for item_id in newest_first if item_id in keep]


def _table_matches(cursor, tsquery: str) -> float:
    """Return the planner's estimate of the term's matches in the whole table (it changes only
    when the table is analysed: kept for a while, like a scope's size)."""

    def estimate() -> float:
        cursor.execute(
            "EXPLAIN (FORMAT JSON) SELECT 1 FROM search_searchitem "
            "WHERE tsv @@ to_tsquery('english', %s)",
            [tsquery],
        )
        plan = cursor.fetchone()[0]
        plan = json.loads(plan) if isinstance(plan, str) else plan
        return float(plan[0]["Plan"]["Plan Rows"])

    return recent_figure(("matches", tsquery), estimate)


def _union(cursor, branches: list[tuple[str, list]]) -> list[tuple]:
    """Run the (SQL, args) branches as one UNION ALL statement and return its rows."""
    cursor.execute(
        " UNION ALL ".join(sql for sql, _ in branches),
        [arg for _, args in branches for arg in args],
    )
    return cursor.fetchall()


def _tsquery(term: Term | str) -> str:
    """Return to_tsquery() text matching the term's word or any of its prefixes."""
    term = as_term(term)
    quoted = ["'" + term.word.replace("'", "") + "'"]
    quoted += ["'" + prefix.replace("'", "") + "':*" for prefix in term.prefixes]
    return quoted[0] if len(quoted) == 1 else "(" + " | ".join(quoted) + ")"


def vector_candidates(
    scope: Scope, model: str, dims: int, vector: np.ndarray, limit: int
) -> list[Candidate]:
    """Return up to limit candidates by cosine similarity to vector, most similar first."""
    where, params = scope_where(scope, "e")
    # dims is inlined (an int) so the planner can match the partial HNSW index on it.
    where = f"e.model = %s AND e.dims = {int(dims)} AND {where}"
    params = [model, *params]
    literal = vector_literal(vector)
    with connection.cursor() as cursor:
        size = capped_count(
            cursor, "search_itemembedding", "e", where, params, settings.SEARCH_EXACT_SCAN_ROWS
        )
        if size <= settings.SEARCH_EXACT_SCAN_ROWS:
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
    return [Candidate(item_id, 1.0 - float(d), at) for item_id, d, at in rows]


def _with_created(nearest: str) -> str:
    """Return SQL that adds each neighbour's created_at (seconds) to its row."""
    return (
        f"SELECT n.item_id, n.d, {epoch_seconds('si.created_at')} FROM ({nearest}) n "
        "JOIN search_searchitem si ON si.id = n.item_id"
    )


def lexical_index_compact() -> None:
    """Nothing to do: the text search vector is a column of the row and goes with it."""


def vector_index_name(dims: int) -> str:
    return f"search_embedding_hnsw_{int(dims)}"


def vector_index_statement(dims: int, *, concurrently: bool = False) -> str:
    """Return the CREATE INDEX of pgvector's HNSW index for vectors of this dimension: partial,
    so that each dimension has its own (a vector index holds one dimension)."""
    how = " CONCURRENTLY" if concurrently else ""
    return (
        f"CREATE INDEX{how} IF NOT EXISTS {vector_index_name(dims)} "
        f"ON search_itemembedding USING hnsw ((vector::vector({int(dims)})) "
        f"vector_cosine_ops) WHERE dims = {int(dims)}"
    )


def vector_index_missing(dims: int) -> bool:
    """Whether vectors of this dimension could have an HNSW index and have no valid one."""
    if dims > HNSW_MAX_DIMS:
        return False  # such vectors are always scanned exactly
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "WHERE c.relname = %s",
            [vector_index_name(dims)],
        )
        row = cursor.fetchone()
    return row is None or not row[0]


def ensure_vector_index(dims: int) -> bool:
    """Create pgvector's HNSW index for vectors of this dimension if it is missing; return
    whether it built one.

    Run by `manage.py vector_index` (and migration 0010 for common dimensions), never by a job:
    building an index over a large table takes long. Outside a transaction it is built
    CONCURRENTLY, so appends and their vectors go on meanwhile; an invalid index a failed
    concurrent build left behind is dropped and built again.
    """
    if not vector_index_missing(dims):  # vectors over HNSW_MAX_DIMS are scanned exactly
        return False
    with connection.cursor() as cursor:
        if not connection.in_atomic_block:
            cursor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {vector_index_name(dims)}")
            cursor.execute(vector_index_statement(dims, concurrently=True))
            return True
        # Deferred foreign-key checks of rows written earlier in this transaction would make
        # CREATE INDEX refuse the table ("pending trigger events"): run them now, then defer
        # again (Django's foreign keys are all DEFERRABLE INITIALLY DEFERRED).
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute(vector_index_statement(dims))
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")
    return True
