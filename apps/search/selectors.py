"""The one search service: lexical + vector + recency over messages, chunks and entries."""

import logging
from dataclasses import dataclass
from datetime import datetime

import numpy as np
from django.conf import settings
from django.db import connection
from django.utils import timezone

from apps.core.rows import Reader
from apps.providers.embeddings import embedder_for
from apps.providers.errors import EmbeddingError
from apps.search.fusion import Fused, FusionWeights, fuse
from apps.search.lexical import lexical_candidates
from apps.search.models import ItemKind, SearchItem
from apps.search.nearest import vector_candidates
from apps.search.query import query_terms
from apps.search.scope import Scope
from apps.search.times import epoch_seconds, from_epoch
from apps.search.vectors import vector_model_serving

logger = logging.getLogger(__name__)
# The relation of SearchItem that holds each kind's own row.
_RELATED = {ItemKind.MESSAGE: "message", ItemKind.CHUNK: "chunk", ItemKind.ENTRY: "entry"}
# What a response says when the embedder failed and vectors were left out of the ranking.
VECTORS_UNAVAILABLE = {
    "code": "vectors_unavailable",
    "message": "The embedder failed, so these results are ranked by full-text and recency only.",
}


@dataclass
class SearchHit:
    item: SearchItem
    score: float
    signals: dict


@dataclass(frozen=True)
class QueryVector:
    model: str
    dims: int
    vector: np.ndarray


@dataclass(frozen=True)
class QueryEmbedding:
    vector: QueryVector | None
    failed: bool = False  # the project has vectors but the embedder could not embed the query


def query_embed(*, project_id, query: str) -> QueryEmbedding:
    """Embed the query with the model of the project's serving index, or say why not."""
    index = vector_model_serving(project_id=project_id)
    if index is None:
        return QueryEmbedding(None)
    try:
        [vector] = embedder_for(index.model, index.dims).embed([query])
    except EmbeddingError as error:
        # A read or write must not fail with the embedder: words and recency still rank.
        logger.warning("project %s searches without vectors: %s", project_id, error)
        return QueryEmbedding(None, failed=True)
    return QueryEmbedding(QueryVector(index.model, index.dims, np.asarray(vector, np.float32)))


def query_vector(*, project_id, query: str) -> QueryVector | None:
    """Return the query's vector under the serving index (None: lexical only, or it failed)."""
    return query_embed(project_id=project_id, query=query).vector


def search(
    *,
    scopes: list[Scope],
    query: str,
    top_k: int,
    vector: QueryVector | None = None,
    weights: FusionWeights | None = None,
    signals: tuple[str, ...] = ("lexical", "vector"),
) -> list[SearchHit]:
    """Return the top_k items of the scopes for the query, best first, each with its signals."""
    winners = rank(
        scopes=scopes, query=query, top_k=top_k, vector=vector, weights=weights, signals=signals
    )
    # Join only the tables of the kinds searched: every join adds its columns to each row.
    related = dict.fromkeys(_RELATED[scope.kind] for scope in scopes)
    items = SearchItem.objects.select_related(*related).in_bulk(
        [entry.item_id for entry in winners]
    )
    return [SearchHit(items[e.item_id], e.score, e.signals) for e in winners if e.item_id in items]


def rank(
    *,
    scopes: list[Scope],
    query: str,
    top_k: int,
    vector: QueryVector | None = None,
    weights: FusionWeights | None = None,
    signals: tuple[str, ...] = ("lexical", "vector"),
) -> list[Fused]:
    """Return the ids of the top_k items of the scopes for the query, best first, scored.

    1. Each scope gives its lexical and vector candidates (its filter inside each query).
    2. Each scope's lists are fused by reciprocal rank with a recency bonus.
    3. The fused lists of all scopes are merged by score and cut to top_k.
    """
    weights = weights or default_weights()
    terms = query_terms(query)
    depth = max(top_k * 4, settings.SEARCH_CANDIDATES)
    ranked_by_scope = []
    seen_at: dict[int, float] = {}  # the candidates' created_at, read with them
    for scope in scopes:
        ranked = {}
        if "lexical" in signals:
            ranked["lexical"] = lexical_candidates(scope, terms, depth, seen_at=seen_at)
        if "vector" in signals and vector is not None:
            ranked["vector"] = vector_candidates(
                scope, vector.model, vector.dims, vector.vector, depth, seen_at=seen_at
            )
        ranked_by_scope.append(ranked)
    candidate_ids = {i for ranked in ranked_by_scope for lst in ranked.values() for i, _ in lst}
    created = {item_id: from_epoch(seen_at[item_id]) for item_id in candidate_ids & seen_at.keys()}
    created.update(items_created_at(candidate_ids - seen_at.keys()))
    now = timezone.now()
    fused = [entry for ranked in ranked_by_scope for entry in fuse(ranked, created, now, weights)]
    fused.sort(key=lambda entry: (-entry.score, -entry.item_id))
    winners = fused[:top_k]
    for entry in winners:
        entry.score = round(entry.score, 6)
    return winners


def items_values(item_ids, fields: tuple[str, ...]) -> dict[int, dict]:
    """Return the named fields (relations' with `__`) of each existing item, by item id.

    Plain rows, as values() gives them, through a Reader composed once per set of fields:
    model instances of the items and their messages, chunks or entries, or the ORM compiling
    the statement each time, cost more than the search itself.
    """
    if not item_ids:
        return {}
    reader = _readers.get(fields)
    if reader is None:
        reader = _readers.setdefault(fields, Reader(SearchItem, ("id", *fields)))
    return {row["id"]: row for row in reader.fetch(*_id_among("t0.id", item_ids))}


_readers: dict[tuple[str, ...], Reader] = {}


def items_created_at(item_ids) -> dict[int, datetime]:
    """Return each existing item's created_at: what the recency bonus needs of a candidate.

    Candidates found by rank() bring theirs; this reads the others'. A plain cursor, reading
    seconds since the epoch: the ORM's compiling, and the drivers' conversion of a stored
    timestamp, cost more than the read (see times.py).
    """
    if not item_ids:
        return {}
    where, params = _id_among("id", item_ids)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id, {epoch_seconds('created_at')} FROM search_searchitem WHERE {where}",
            params,
        )
        rows = cursor.fetchall()
    return {item_id: from_epoch(at) for item_id, at in rows}


def _id_among(column: str, item_ids) -> tuple[str, list]:
    """Return (SQL condition, params): column is one of item_ids (a non-empty collection)."""
    ids = list(item_ids)
    if connection.vendor == "postgresql":  # one array parameter: less to compose than an IN list
        return f"{column} = ANY(%s)", [ids]
    return f"{column} IN ({', '.join(['%s'] * len(ids))})", ids


def default_weights() -> FusionWeights:
    return FusionWeights(
        lexical=settings.SEARCH_WEIGHT_LEXICAL,
        vector=settings.SEARCH_WEIGHT_VECTOR,
        recency=settings.SEARCH_WEIGHT_RECENCY,
        half_life_days=settings.SEARCH_RECENCY_HALF_LIFE_DAYS,
        k=settings.SEARCH_RRF_K,
    )
