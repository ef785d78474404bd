"""Full-text candidates: PostgreSQL tsvector + GIN, SQLite FTS5 scored like BM25 in the scope."""

import math
from dataclasses import dataclass

from django.conf import settings
from django.db import connection

from apps.search.lexical_postgres import idf_scores, newest_matches
from apps.search.query import fts5_match
from apps.search.scope import Scope
from apps.search.sizes import capped_count
from apps.search.times import epoch_seconds

# In the PostgreSQL score, how much ts_rank (how often the terms occur) adds to the IDF sum.
_RANK_WEIGHT = 0.1
# BM25's constants: how fast a term's weight saturates, and how much a text's length (in
# characters here, not tokens) discounts it: 0.3 rather than the usual 0.75 ranked the labelled
# retrieval set (bench/retrieval.py) as well as FTS5's bm25() did.
_BM25_K1 = 1.2
_BM25_B = 0.3
# A scope's item count (counted at most every 30 s) is exact up to this; its id span beyond.
_COUNT_CAP = 100_000


def lexical_candidates(
    scope: Scope, terms: list[str], limit: int, *, seen_at: dict[int, float] | None = None
) -> list[tuple[int, float]]:
    """Return up to limit (item id, score) pairs, best first; a higher score is a better match.

    seen_at, when given, receives each returned item's created_at in seconds since the epoch,
    read by the same statements (the recency bonus needs it; a query of its own costs more).
    """
    if not terms:
        return []
    created: dict[int, float] = {}
    if connection.vendor == "postgresql":
        matches = newest_matches(scope, terms)
        created = {match.item_id: match.created for match in matches}
        found = idf_scores(matches, len(terms), _RANK_WEIGHT)[:limit]
    else:
        where, params = scope.where("si")
        found = _sqlite(where, params, terms, limit, created)
    if seen_at is not None:
        seen_at.update((item_id, created[item_id]) for item_id, _ in found)
    return found


def _sqlite(where, params, terms, limit, created: dict[int, float]):
    """Score each term's newest matches in the scope, reading only the scope's span.

    FTS5 cannot filter by scope inside its index, so a common word would have every match in
    the table read before the join drops other scopes' rows. A rowid range is a filter FTS5
    applies inside its doclists; the scope's lowest and highest item ids bound that range, so a
    thread or a small tenant reads little more than its own matches. Each term then brings its
    newest SEARCH_LEXICAL_CANDIDATES matches, FTS5 walking its doclist backwards and stopping.

    FTS5's own bm25() is not used: it takes a word's frequency from the whole index, every
    tenant's, so one tenant's writing would move another's ranking, and counting it costs as
    much as the word is common (5.7 ms for a word in 125,000 of 300,000 items, against 0.2 ms
    for the same 200 rows unscored). bm25_scores() takes the scope's own figures instead.
    """
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
        per_term = []
        for term in terms:
            args = [fts5_match([term]), low, high, *params, settings.SEARCH_LEXICAL_CANDIDATES]
            cursor.execute(newest, args)
            rows = cursor.fetchall()
            per_term.append([(item_id, length) for item_id, length, _ in rows])
            created.update((item_id, at) for item_id, _, at in rows)
        if not any(per_term):
            return []
        size = capped_count(cursor, "search_searchitem", "si", where, params, _COUNT_CAP)
    span = Span(low, high, size if size <= _COUNT_CAP else high - low + 1)
    scores = bm25_scores(per_term, span, settings.SEARCH_LEXICAL_CANDIDATES)
    ranked = sorted(scores.items(), key=lambda pair: (-pair[1], -pair[0]))
    return ranked[:limit]


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
            frequency *= (span.high - span.low + 1) / (span.high - rows[-1][0] + 1)
        documents = max(span.items, frequency)  # the scope's count may be a little stale
        idf = math.log(1 + (documents - frequency + 0.5) / (frequency + 0.5))
        for item_id, _ in rows:
            norm = 1 - _BM25_B + _BM25_B * lengths[item_id] / average
            weight = idf * (_BM25_K1 + 1) / (1 + _BM25_K1 * norm)
            scores[item_id] = scores.get(item_id, 0.0) + weight
    return scores
