"""Full-text candidates: PostgreSQL tsvector + GIN, SQLite FTS5 with bm25()."""

from django.conf import settings
from django.db import connection

from apps.search.lexical_postgres import idf_scores, newest_matches
from apps.search.query import fts5_match
from apps.search.scope import Scope

# In the PostgreSQL score, how much ts_rank (how often the terms occur) adds to the IDF sum.
_RANK_WEIGHT = 0.1


def lexical_candidates(scope: Scope, terms: list[str], limit: int) -> list[tuple[int, float]]:
    """Return up to limit (item id, score) pairs, best first; a higher score is a better match."""
    if not terms:
        return []
    if connection.vendor == "postgresql":
        return idf_scores(newest_matches(scope, terms), len(terms), _RANK_WEIGHT)[:limit]
    where, params = scope.where("si")
    return _sqlite(where, params, terms, limit)


def _sqlite(where, params, terms, limit):
    """Rank each term's newest matches in the scope by bm25(), reading only the scope's span.

    FTS5 cannot filter by scope inside its index, so a common word would have every match in
    the table scored before the join drops other scopes' rows. A rowid range is a filter FTS5
    applies inside its doclists; the scope's lowest and highest item ids bound that range, so a
    thread or a small tenant reads little more than its own matches. Each term then brings its
    newest SEARCH_LEXICAL_CANDIDATES matches, FTS5 walking its doclist backwards and stopping.
    bm25() adds up over the terms of a query, so an item scores the sum of its terms' bm25()
    among the lists it is in: a common word found in an older item than its newest matches
    adds nothing there, and it would have added little (scoring every match of a common word,
    as one query over all terms does, cost more than the rest of a search).
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
            SELECT si.id, bm25(search_item_fts)
            FROM search_item_fts f JOIN search_searchitem si ON si.id = f.rowid
            WHERE search_item_fts MATCH %s AND f.rowid BETWEEN %s AND %s AND {where}
            ORDER BY f.rowid DESC LIMIT %s
        """
        scores: dict[int, float] = {}
        for term in terms:
            args = [fts5_match([term]), low, high, *params, settings.SEARCH_LEXICAL_CANDIDATES]
            cursor.execute(newest, args)
            for item_id, score in cursor.fetchall():
                # bm25() is lower-is-better; negate so every signal reads higher-is-better.
                scores[item_id] = scores.get(item_id, 0.0) - float(score)
    ranked = sorted(scores.items(), key=lambda pair: (-pair[1], -pair[0]))
    return ranked[:limit]
