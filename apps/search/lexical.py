"""Full-text candidates: PostgreSQL tsvector + GIN, SQLite FTS5 with bm25()."""

import math

from django.conf import settings
from django.db import connection

from apps.search.query import fts5_match
from apps.search.scope import Scope

# In the PostgreSQL score, how much ts_rank_cd (term proximity and frequency) adds to the IDF sum.
_RANK_WEIGHT = 0.1


def lexical_candidates(scope: Scope, terms: list[str], limit: int) -> list[tuple[int, float]]:
    """Return up to limit (item id, score) pairs, best first; a higher score is a better match."""
    if not terms:
        return []
    if connection.vendor == "postgresql":
        return _postgres(scope, terms, limit)
    where, params = scope.where("si")
    return _sqlite(where, params, terms, limit)


def _postgres(scope, terms, limit):
    """Rank by the IDF of the matched terms, computed over each term's newest matches.

    ts_rank_cd alone weighs a common word like a rare one. Each term contributes its newest
    SEARCH_LEXICAL_CANDIDATES matches (so a rare word's old match is never crowded out by a
    common word's many new ones, and the cost stays bounded); a term's document frequency among
    those candidates gives its IDF, and an item scores the IDF sum of the terms it contains.

    Per term the planner chooses: a rare word is looked up in the GIN index and its few
    matches sorted; a common word walks the scope's index newest first and stops at the limit.
    """
    per_term = settings.SEARCH_LEXICAL_CANDIDATES
    where, params, order = scope.newest_first("si")
    branches, args = [], []
    for term in terms:
        branches.append(
            f"(SELECT si.id, si.tsv FROM search_searchitem si "
            f"WHERE si.tsv @@ to_tsquery('english', %s) AND {where} ORDER BY {order} LIMIT %s)"
        )
        args += [_quoted(term), *params, per_term]
    matches = ", ".join("c.tsv @@ to_tsquery('english', %s)" for _ in terms)
    any_term = " | ".join(_quoted(term) for term in terms)
    sql = f"""
        SELECT c.id, ts_rank_cd(c.tsv, to_tsquery('english', %s)), {matches}
        FROM ({" UNION ".join(branches)}) c
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, [any_term, *[_quoted(term) for term in terms], *args])
        rows = cursor.fetchall()
    if not rows:
        return []
    frequency = [sum(1 for row in rows if row[2 + i]) for i in range(len(terms))]
    idf = [math.log(1 + len(rows) / df) if df else 0.0 for df in frequency]
    scored = [
        (row[0], sum(w for w, hit in zip(idf, row[2:], strict=True) if hit) + _RANK_WEIGHT * row[1])
        for row in rows
    ]
    scored.sort(key=lambda pair: (-pair[1], -pair[0]))
    return scored[:limit]


def _quoted(term: str) -> str:
    return "'" + term.replace("'", "") + "'"


def _sqlite(where, params, terms, limit):
    """Rank the scope's candidate matches by bm25(), reading only the scope's span of FTS5.

    FTS5 cannot filter by scope inside its index, so a common word would have every match in
    the table scored before the join drops other scopes' rows. A rowid range is a filter FTS5
    applies inside its doclists; the scope's lowest and highest item ids bound that range, so a
    thread or a small tenant reads little more than its own matches. As on PostgreSQL, each
    term contributes its newest SEARCH_LEXICAL_CANDIDATES matches in the scope (FTS5 walks a
    doclist backwards and stops), and only those candidates are scored: bm25() over every match
    of a common word cost more than the rest of a search. bm25() keeps its table-wide
    statistics either way.
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
            SELECT si.id FROM search_item_fts f JOIN search_searchitem si ON si.id = f.rowid
            WHERE search_item_fts MATCH %s AND f.rowid BETWEEN %s AND %s AND {where}
            ORDER BY f.rowid DESC LIMIT %s
        """
        candidates = set()
        for term in terms:
            cursor.execute(
                newest, [fts5_match([term]), low, high, *params, settings.SEARCH_LEXICAL_CANDIDATES]
            )
            candidates.update(row[0] for row in cursor.fetchall())
        if not candidates:
            return []
        marks = ", ".join(["%s"] * len(candidates))
        sql = f"""
            SELECT rowid, bm25(search_item_fts) AS score FROM search_item_fts
            WHERE search_item_fts MATCH %s AND rowid IN ({marks})
            ORDER BY score, rowid DESC LIMIT %s
        """
        cursor.execute(sql, [fts5_match(terms), *sorted(candidates), limit])
        # bm25() is lower-is-better; negate so every signal reads higher-is-better.
        return [(row[0], -float(row[1])) for row in cursor.fetchall()]
