"""What both search backends share: the candidate row, the full-text score, scope conditions,
capped counts."""

import math
import time
import uuid
from dataclasses import dataclass

from django.conf import settings
from django.db import connection

from apps.search.item_text import message_text_sql
from apps.search.scope import Scope


@dataclass(frozen=True)
class MessageRow:
    """Where a message item sits in its conversation (conversation-aware ranking)."""

    item_id: int
    thread_id: object  # compared only: a UUID on PostgreSQL, hex text on SQLite
    seq: int
    created: float  # seconds since the epoch
    run_id: object  # None when the message belongs to no run


@dataclass(frozen=True)
class Candidate:
    item_id: int
    score: float  # higher is better: a full-text score, or a cosine similarity
    created: float  # the item's created_at in seconds since the epoch (the recency bonus)


# BM25's constants: how fast a term's weight saturates, and how much a text's length (in
# characters here, not tokens) discounts it: 0.3 rather than the usual 0.75 ranked the labelled
# retrieval set (bench/retrieval.py) as well as FTS5's bm25() did.
_BM25_K1 = 1.2
_BM25_B = 0.3


@dataclass(frozen=True)
class Span:
    """A scope's lowest and highest item ids, and how many items it holds."""

    low: int
    high: int
    items: int


def bm25_scores(
    per_term: list[list[tuple[int, int]]], span: Span, candidates: int
) -> dict[int, float]:
    """Return each item's BM25 score, from its terms' newest matches in the scope.

    per_term holds, for each query term, its (item id, text length) matches in the scope,
    newest first, at most `candidates` of them. A term with fewer matches than that was counted;
    one with more is estimated from how far back its newest reach into the id span: 200 matches
    among the newest tenth of the span make about 2,000. Every matched term counts once (chat
    messages and chunks seldom repeat a word), and text length, against the average of the rows
    read, discounts as in BM25.
    """
    lengths = {item_id: length or 0 for rows in per_term for item_id, length in rows}
    if not lengths:
        return {}
    average = max(1.0, sum(lengths.values()) / len(lengths))
    scores: dict[int, float] = {}
    for rows in per_term:
        if not rows:
            continue
        frequency = float(len(rows))
        if len(rows) >= candidates:
            # At least 1: a match written after the span was read (callers widen the span to
            # hold what they found; this keeps the estimate finite whatever they pass)
            frequency *= (span.high - span.low + 1) / max(1, span.high - rows[-1][0] + 1)
        documents = max(span.items, frequency)  # the scope's count may be a little stale
        idf = math.log(1 + (documents - frequency + 0.5) / (frequency + 0.5))
        for item_id, _ in rows:
            norm = 1 - _BM25_B + _BM25_B * lengths[item_id] / average
            weight = idf * (_BM25_K1 + 1) / (1 + _BM25_K1 * norm)
            scores[item_id] = scores.get(item_id, 0.0) + weight
    return scores


def bm25_candidates(
    per_term: list[list[tuple[int, int]]],
    span: Span,
    candidates: int,
    created: dict[int, float],
    limit: int,
) -> list[Candidate]:
    """Return the limit best of bm25_scores(), best first (the newer first on a tie), with each
    item's created_at from created (item id -> epoch seconds)."""
    scores = bm25_scores(per_term, span, candidates)
    ranked = sorted(scores.items(), key=lambda pair: (-pair[1], -pair[0]))
    return [Candidate(item_id, score, created[item_id]) for item_id, score in ranked[:limit]]


def scope_where(scope: Scope, alias: str, *, leading: str | None = None) -> tuple[str, list]:
    """Return (SQL conditions, params) restricting table `alias` to the scope.

    Scoping is part of every query, never a filter after it, so a tenant's top-k is complete.
    The `leading` column (see postgres.newest_first) is compared with `= ANY(array)` instead of
    `=`: the same rows, on PostgreSQL only.
    """
    conditions = [f"{alias}.kind = %s"]
    params: list = [scope.kind]
    for column, value in (
        ("project_id", scope.project_id),
        ("agent_id", scope.agent_id),
        ("resource_id", scope.resource_id),
        ("thread_id", scope.thread_id),
        ("knowledge_base_id", scope.single_knowledge_base),
    ):
        if value is None:
            continue
        if column == "agent_id" and scope.with_shared:
            conditions.append(f"({alias}.agent_id = %s OR {alias}.agent_id IS NULL)")
            params.append(db_uuid(value))
        elif column == leading:
            conditions.append(f"{alias}.{column} = ANY(%s)")
            params.append([db_uuid(value)])
        else:
            conditions.append(f"{alias}.{column} = %s")
            params.append(db_uuid(value))
    if scope.without_resource:
        conditions.append(f"{alias}.resource_id IS NULL")
    if scope.knowledge_base_ids is not None and scope.single_knowledge_base is None:
        if not scope.knowledge_base_ids:
            conditions.append("1 = 0")
        else:
            marks = ", ".join(["%s"] * len(scope.knowledge_base_ids))
            conditions.append(f"{alias}.knowledge_base_id IN ({marks})")
            params += [db_uuid(kb) for kb in scope.knowledge_base_ids]
    if scope.visible_only:
        conditions.append(f"{alias}.visible = %s")
        params.append(True)
    return " AND ".join(conditions), params


def db_uuid(value):
    """Return a UUID as the database stores it (native on PostgreSQL, 32 hex chars on SQLite)."""
    value = value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))
    return value if connection.vendor == "postgresql" else value.hex


def epoch_seconds(column: str) -> str:
    """Return SQL for `column` (a timestamp) as a float of seconds since the epoch.

    The recency bonus needs every candidate's created_at; the database converts it to a float
    more cheaply than the drivers convert a stored timestamp, value by value.
    """
    if connection.vendor == "postgresql":
        return f"extract(epoch FROM {column})::float8"
    # SQLite stores UTC text; julianday() reads it, counted from the epoch's day.
    return f"(julianday({column}) - 2440587.5) * 86400.0"


def matches_per_term(limit: int, terms: int = 1) -> int:
    """Return how many of each query word's newest matches a search reads for limit candidates.

    The candidates asked for are shared among the words (a word's matches may hold the
    others' too), but no word brings fewer than SEARCH_CANDIDATES (or limit, when fewer are
    asked for) nor more than SEARCH_LEXICAL_CANDIDATES. So a one-word query reads as many
    matches as it asks for candidates, and three words read about as many rows as one.

    In a scope too large to read whole, a common word's newest matches are found by walking
    the scope newest first, at a cost linear in their number: knowledge's 100,000 chunks took
    13-23 ms for two common words at 200 each (bench/context.py, PostgreSQL), where a context
    asks for 50 candidates. On the multi-session set (bench/retrieval.py), 50 matches per word
    instead of 200 moved recall@10 by one question of 166 or less either way, on both
    backends. A context's recall asks for four times its semantic_recall_top_k and half the
    recent window: at top_k 20 that was 120 candidates, and three words reading 50 matches each
    instead of 120 moved the evidence the context carried (bench/context_recall.py, SQLite, the
    set and its long threads, at 2k / 4k / 8k tokens) by one point at most.
    """
    floor = min(limit, settings.SEARCH_CANDIDATES)
    share = -(-limit // max(terms, 1))  # rounded up
    return max(1, min(settings.SEARCH_LEXICAL_CANDIDATES, max(share, floor)))


# How many rows a scope has, or how often a word occurs, only chooses between ways of reading
# a scope that return the same rows, so a figure up to 30 s old will do; working it out on every
# search would cost as much as the search.
_FIGURE_SECONDS = 30.0
_figures: dict[tuple, tuple[float, float]] = {}


def recent_figure(key: tuple, compute):
    """Return compute() for this key (within the current database), at most 30 s old."""
    key = (connection.settings_dict["NAME"], *key)
    known = _figures.get(key)
    if known is not None and time.monotonic() - known[1] < _FIGURE_SECONDS:
        return known[0]
    value = compute()
    if len(_figures) > 1000:  # scopes and words come and go; the dict must not grow without end
        _figures.clear()
    _figures[key] = (value, time.monotonic())
    return value


def capped_count(cursor, table: str, alias: str, where: str, params: list, cap: int) -> int:
    """Return the number of rows of `table AS alias` meeting where, or cap + 1 if more."""

    def count() -> int:
        cursor.execute(
            f"SELECT count(*) FROM (SELECT 1 FROM {table} {alias} WHERE {where} LIMIT %s) s",
            [*params, cap + 1],
        )
        return cursor.fetchone()[0]

    return recent_figure(("count", table, where, tuple(map(_hashable, params)), cap), count)


def message_neighbourhood(
    scope: Scope, item_ids: list[int], *, followed: int = 0, follow: int = 1
) -> list[MessageRow]:
    """Return the rows of these message items and of the messages just before and after each
    (seq ± 1 in the same thread), those in the scope only; for the first `followed` of them,
    the `follow` messages after (seq + 1 … seq + follow) instead of one.

    Two queries, each driven by unique indexes: the messages around the candidates (a range of
    (thread, seq) per candidate), then their search items among the scope (one probe of the
    item's message per message). One query joining both let PostgreSQL's planner, which cannot
    estimate a seq ± 1 range, read all of a thread's items to apply the scope first: 2.05 ms
    for one candidate in a 1,200-message thread among 1M items, against 0.80 + 0.33 ms for the
    two (bench/search.py --profile). Both are bounded by the number of ids, never by a thread's
    length.
    """
    if not item_ids:
        return []
    join = join_in_order()
    chosen, ids = among("s0.id", item_ids)
    first, firsts = among("s0.id", item_ids[:followed] or [0])
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            SELECT m.id, m.thread_id, m.seq, {epoch_seconds("m.created_at")}, m.run_id
            FROM search_searchitem s0
            {join} threads_message m0 ON m0.id = s0.message_id
            {join} threads_message m
                ON m.thread_id = m0.thread_id AND m.seq BETWEEN m0.seq - 1
                AND m0.seq + CASE WHEN {first} THEN %s ELSE 1 END
            WHERE {chosen}
            """,
            [*firsts, max(follow, 1), *ids],
        )
        around = {row[0]: row[1:] for row in cursor.fetchall()}
        if not around:  # the candidates' messages were deleted meanwhile
            return []
        where, params = scope_where(scope, "si")
        of_messages, message_ids = among("s.message_id", list(around))
        # The subquery finds the items by their messages alone (OFFSET 0 keeps the scope out of
        # it), then the scope filters them. Given both at once, PostgreSQL ANDed the scope's
        # bitmaps and read every item of the thread: 2.5 ms for 58 items of a 1,200-message
        # thread among 1M messages, where 58 probes of the message's unique index take 0.3.
        # SQLite, given both, walked the thread's index (7.9 ms for 60 items of a 10,000-message
        # thread); it never merges a subquery with an OFFSET into the query around it.
        fence = "OFFSET 0" if connection.vendor == "postgresql" else "LIMIT -1 OFFSET 0"
        cursor.execute(
            f"SELECT si.id, si.message_id FROM ("
            f"SELECT * FROM search_searchitem s WHERE {of_messages} {fence}) si WHERE {where}",
            [*message_ids, *params],
        )
        items = cursor.fetchall()
    return [MessageRow(item_id, *around[message_id]) for item_id, message_id in items]


def join_in_order() -> str:
    """Return the join that keeps a query's tables in the order written, from the search items
    to their messages: SQLite's planner would otherwise start from threads_message."""
    return "JOIN" if connection.vendor == "postgresql" else "CROSS JOIN"


def among(column: str, values: list) -> tuple[str, list]:
    """Return (condition, params) for column among values: one array on PostgreSQL."""
    if connection.vendor == "postgresql":
        return f"{column} = ANY(%s)", [values]
    return f"{column} IN ({', '.join(['%s'] * len(values))})", list(values)


def _hashable(value):
    return tuple(value) if isinstance(value, list) else value


def insert_message_items(*, thread, project_id, after_seq: int, payload_chars: int) -> None:
    """Index the thread's messages after after_seq with one INSERT … SELECT.

    Measured (bench/ingest.py, batches of 100 on PostgreSQL): building the SearchItem rows in
    Python and bulk-inserting them took a third of an append; the database copies them itself.
    A message is found by its name, its content, the first payload_chars of its payload's JSON,
    its actor and its date (item_text.py): a few string functions per row, in the same INSERT.
    """
    resource = db_uuid(thread.resource_id) if thread.resource_id else None
    text = message_text_sql(connection.vendor, payload_chars)
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            INSERT INTO search_searchitem
                (kind, project_id, agent_id, resource_id, thread_id, message_id, content,
                 visible, created_at)
            SELECT %s, %s, %s, %s, m.thread_id, m.id, {text}, %s, m.created_at
            FROM threads_message m
            WHERE m.thread_id = %s AND m.seq > %s
            """,
            [
                "message",
                db_uuid(project_id),
                db_uuid(thread.agent_id),
                resource,
                True,
                db_uuid(thread.id),
                after_seq,
            ],
        )
