"""The one search service: lexical + vector + recency over messages, chunks and entries.

search_for_agent() is what the API, the console and the context assembly call: it scopes the
search to one agent, ranks, and returns typed hits with the messages around each message hit.
rank() and search() are its parts, for callers that build their own scopes (operators,
episodic recall, the knowledge-base webhooks, evaluation).
"""

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

import numpy as np
from django.conf import settings
from django.utils import timezone

from apps.memconfig.selectors import config_effective
from apps.providers.embeddings import embedder_for
from apps.providers.errors import EmbeddingError
from apps.search.backends import backend
from apps.search.conversation import with_conversation
from apps.search.fusion import Fused, FusionWeights, fuse
from apps.search.models import ItemKind, SearchItem
from apps.search.normalized import fuse_normalized
from apps.search.query import lexical_terms
from apps.search.scope import Scope
from apps.search.time_boost import boost_in_window, query_window
from apps.search.vectors import vector_model_serving

logger = logging.getLogger(__name__)
# The relation of SearchItem that holds each kind's own row (keyed by kind, as text).
_RELATED: dict[str, str] = {
    ItemKind.MESSAGE: "message",
    ItemKind.CHUNK: "chunk",
    ItemKind.ENTRY: "entry",
    ItemKind.NOTE: "note",
    ItemKind.ARTIFACT: "artifact",
}
# The kinds that belong to a thread: thread_id narrows them.
_IN_THREADS = {ItemKind.MESSAGE, ItemKind.ARTIFACT}

# Reads the messages at (thread id, seq) places and around them: apps.threads.selectors.
# messages_at, passed in by the caller (messages belong to the threads app, above this one).
MessagesReader = Callable[..., dict[tuple[uuid.UUID, int], Any]]

# The result type the API shows for each kind.
RESULT_TYPES: dict[str, str] = {
    ItemKind.MESSAGE: "message",
    ItemKind.CHUNK: "knowledge",
    ItemKind.ENTRY: "episodic",
    ItemKind.NOTE: "note",
    ItemKind.ARTIFACT: "artifact",
}
# What a response says when the embedder failed and vectors were left out of the ranking.
VECTORS_UNAVAILABLE = {
    "code": "vectors_unavailable",
    "message": "The embedder failed, so these results are ranked by full-text and recency only.",
}
# What a response says when the caller set a similarity floor that full-text search cannot apply.
MIN_SIMILARITY_IGNORED = {
    "code": "min_similarity_ignored",
    "message": "This project has no vectors (no embedder configured), so min_similarity was not "
    "applied: results are ranked by full-text and recency.",
}


@dataclass(frozen=True)
class Floor:
    """A similarity floor: hits found only by their vectors, with a cosine similarity to the
    query below it, are dropped (see _above_floor).

    asked: the caller set it (rather than the search_min_similarity setting), so an answer
    that cannot apply it says so.
    """

    value: float
    asked: bool = False


def similarity_floor(*, agent, value: float | None) -> Floor:
    """Return the floor the caller set (value), or else the agent's search_min_similarity."""
    if value is not None:
        return Floor(value, asked=True)
    return Floor(config_effective(agent=agent)["search_min_similarity"])


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
    embedder = embedder_for(index.model, index.dims)
    if embedder is None:  # a serving index always names its model; nothing to embed with
        return QueryEmbedding(None)
    try:
        [vector] = embedder.embed([query])
    except EmbeddingError as error:
        # A read or write must not fail with the embedder: words and recency still rank.
        logger.warning("project %s searches without vectors: %s", project_id, error)
        return QueryEmbedding(None, failed=True)
    return QueryEmbedding(QueryVector(index.model, index.dims, np.asarray(vector, np.float32)))


def query_vector(*, project_id, query: str) -> QueryVector | None:
    """Return the query's vector under the serving index (None: lexical only, or it failed)."""
    return query_embed(project_id=project_id, query=query).vector


def rank(
    *,
    scopes: list[Scope],
    query: str,
    top_k: int,
    vector: QueryVector | None = None,
    weights: FusionWeights | None = None,
    signals: tuple[str, ...] = ("lexical", "vector"),
    min_similarity: float | None = None,
    as_of: datetime | None = None,
) -> list[Fused]:
    """Return the ids of the top_k items of the scopes for the query, best first, scored.

    as_of is the moment the recency bonus counts ages from: now, unless an evaluation asks a
    labelled question as of when it was asked (apps/evaluation/retrieval.py).

    1. Each scope gives its lexical and vector candidates (its filter inside each query).
    2. Each scope's lists are fused by reciprocal rank, or by normalised scores for the kinds
       in weights.normalized_kinds (normalized.py), with a recency bonus; messages inside the
       period the query names gain a boost (time_boost.py).
    3. With a vector and min_similarity, items only the vectors found and less similar than
       that go (see _above_floor).
    4. Messages share their scores with their neighbours and sessions (conversation.py): the
       2·top_k best candidates and the messages around them; a message that enters so gets the
       period's boost too; they fill a scope's list up to top_k, then only replace weaker ones.
    5. The fused lists of all scopes are merged by score and cut to top_k.
    """
    db = backend()
    weights = weights or default_weights()
    terms = lexical_terms(query)
    depth = max(top_k * 4, settings.SEARCH_CANDIDATES)
    now = as_of or timezone.now()
    fused: list[Fused] = []
    for scope in scopes:
        candidates = {}
        if "lexical" in signals:
            candidates["lexical"] = db.lexical_candidates(scope, terms, depth)
        if "vector" in signals and vector is not None:
            candidates["vector"] = db.vector_candidates(
                scope, vector.model, vector.dims, vector.vector, depth
            )
        created = {
            c.item_id: datetime.fromtimestamp(c.created, UTC)
            for found in candidates.values()
            for c in found
        }
        ranked = {
            signal: [(c.item_id, c.score) for c in found] for signal, found in candidates.items()
        }
        fusion = fuse_normalized if scope.kind in weights.normalized_kinds else fuse
        scope_fused = fusion(ranked, created, now, weights)
        if min_similarity is not None and "vector" in ranked:
            scope_fused = _above_floor(scope_fused, min_similarity)
        for entry in scope_fused:
            entry.kind = scope.kind
        window = query_window(
            scope=scope, query=query, fused=scope_fused, created=created, weights=weights
        )
        if window is not None:
            scope_fused = boost_in_window(
                fused=scope_fused, created=created, window=window, weights=weights
            )
        count = len(scope_fused)
        if scope.kind == ItemKind.MESSAGE:
            # The best 2·top_k candidates share their scores, not all of depth: at top_k 10 on
            # the multi-session set, recall@10 moved by one or two questions of 166 either way
            # (fused 0.846 → 0.834, lexical 0.633 → 0.639, SQLite, local ONNX), and a common
            # query's neighbourhood reads 60 messages instead of 150.
            candidates_created = set(created)
            scope_fused = with_conversation(scope, scope_fused, weights, top_k * 2, created)
            entered = [e for e in scope_fused if e.item_id not in candidates_created]
            if window is not None and entered:
                # A message that enters by its share is of the period the query names or not,
                # as a candidate is; it gets the boost too (see conversation.py).
                boost_in_window(fused=entered, created=created, window=window, weights=weights)
                scope_fused.sort(key=lambda entry: (-entry.score, -entry.item_id))
        # Messages that entered by their shares fill the list up to top_k, and beyond that
        # take the place of weaker ones (conversation.py).
        scope_fused = scope_fused[: max(count, top_k)]
        fused += scope_fused
    fused.sort(key=lambda entry: (-entry.score, -entry.item_id))
    winners = fused[:top_k]
    for entry in winners:
        entry.score = round(entry.score, 6)
    return winners


def _above_floor(entries: list[Fused], floor: float) -> list[Fused]:
    """Drop the entries found by their vectors alone whose similarity is below floor.

    The floor is on the vector signal: every item has some similarity to any query, so a dense
    list always comes full, and its tail is noise. An item the words found stays whatever its
    similarity: a small or hashed embedder rates exact matches low, and a floor that dropped
    them would lose what full-text search alone finds.

    The floor judges each item on its own evidence: the conversation step comes after it, so a
    message dropped here may come back beside a kept hit, by the share it gains from it.
    """
    kept = []
    for entry in entries:
        vector = entry.signals.get("vector")
        if "lexical" in entry.signals or (vector and vector["score"] >= floor):
            kept.append(entry)
    return kept


def search(
    *,
    scopes: list[Scope],
    query: str,
    top_k: int,
    vector: QueryVector | None = None,
    weights: FusionWeights | None = None,
    signals: tuple[str, ...] = ("lexical", "vector"),
    min_similarity: float | None = None,
    as_of: datetime | None = None,
) -> list[SearchHit]:
    """Return the top_k items of the scopes for the query, best first, each with its signals
    (as_of: see rank)."""
    winners = rank(
        scopes=scopes,
        query=query,
        top_k=top_k,
        vector=vector,
        weights=weights,
        signals=signals,
        min_similarity=min_similarity,
        as_of=as_of,
    )
    return _load(winners, [scope.kind for scope in scopes])


def _load(winners: list[Fused], kinds: list[str]) -> list[SearchHit]:
    """Read the winners' items with their own rows (one query), in the winners' order."""
    # Join only the tables of the kinds searched: every join adds its columns to each row.
    related = dict.fromkeys(_RELATED[kind] for kind in kinds)
    items = SearchItem.objects.select_related(*related)
    if "artifact" in related:  # its bytes stay in the row; the hit shows the indexed text
        items = items.defer("artifact__content")
    loaded = items.in_bulk([e.item_id for e in winners])
    return [
        SearchHit(loaded[e.item_id], e.score, e.signals) for e in winners if e.item_id in loaded
    ]


def nearest(*, scope: Scope, vector: QueryVector, limit: int) -> list[tuple[int, float]]:
    """Return (item id, cosine similarity) of the scope's items nearest to vector, nearest first."""
    found = backend().vector_candidates(scope, vector.model, vector.dims, vector.vector, limit)
    return [(candidate.item_id, candidate.score) for candidate in found]


@dataclass(frozen=True)
class ContextMessage:
    """A message shown beside a hit: enough to rebuild the chat message it was."""

    id: uuid.UUID
    seq: int
    role: str
    kind: str
    name: str
    content: str
    payload: Any
    created_at: datetime
    token_count: int | None = None  # as the append counted it (count_message_tokens)


@dataclass(frozen=True)
class MessageRange:
    before: list[ContextMessage]
    after: list[ContextMessage]


@dataclass
class Hit:
    """One search result. Message hits carry the message's fields and the messages around it."""

    type: str  # message | knowledge | episodic | note
    id: uuid.UUID | int  # the message's, entry's or note's id; a chunk's is an int
    content: str
    score: float
    signals: dict
    thread_id: uuid.UUID | None = None
    created_at: datetime | None = None
    metadata: dict = field(default_factory=dict)
    message_id: uuid.UUID | None = None
    seq: int | None = None
    role: str | None = None
    kind: str | None = None
    name: str | None = None
    payload: Any = None
    context: MessageRange | None = None
    token_count: int | None = None  # a message's, as the append counted it


@dataclass(frozen=True)
class SearchResults:
    hits: list[Hit]
    warnings: list[dict]


def search_for_agent(
    *,
    agent,
    query: str,
    kinds: list[str],
    thread_id: uuid.UUID | None = None,
    resource_id: uuid.UUID | None = None,
    knowledge_base_ids: tuple[uuid.UUID, ...] = (),
    top_k: int = 10,
    message_range: tuple[int, int] | None = None,
    without_resource: bool = False,
    embedding: QueryEmbedding | None = None,
    floor: Floor | None = None,
    read_messages: MessagesReader | None = None,
) -> SearchResults:
    """Search what the agent may see: its messages and entries, its project's knowledge, its
    own notes and those its project shares.

    thread_id narrows messages to one thread and resource_id messages and entries to one end
    user; both must already be known to be the agent's (the caller looked them up);
    without_resource narrows them to items of no end user instead. message_range is (before,
    after): how many messages to show around each message hit; by default the agent's
    semantic_recall_range_before/after settings. Messages are ranked with the agent's
    search_context_* and search_session_gap_minutes settings. embedding is the query's, when
    the caller searches several times for one query and embedded it once (query_embed). floor
    drops hits less similar than its value when the project has vectors. Notes belong to
    no thread or end user, so thread and resource do not narrow them. read_messages reads the
    messages of message hits and around them (apps.threads.selectors.messages_at): required
    when kinds hold messages.
    """
    scopes = [
        _agent_scope(
            agent,
            kind,
            thread_id=thread_id,
            resource_id=resource_id,
            knowledge_base_ids=knowledge_base_ids,
            without_resource=without_resource,
        )
        for kind in dict.fromkeys(kinds)
    ]
    if embedding is None:
        embedding = query_embed(project_id=agent.project_id, query=query)
    config = config_effective(agent=agent)
    winners = rank(
        scopes=scopes,
        query=query,
        top_k=top_k,
        vector=embedding.vector,
        weights=agent_weights(config),
        min_similarity=floor.value if floor else None,
    )
    found: dict[int, Hit] = {}
    if ItemKind.MESSAGE in kinds:
        if message_range is None:
            message_range = (
                config["semantic_recall_range_before"],
                config["semantic_recall_range_after"],
            )
        if read_messages is None:
            raise ValueError("message hits are read with read_messages (threads' messages_at)")
        found = _message_hits(winners, *message_range, read_messages)
    others = [entry for entry in winners if entry.item_id not in found]
    other_kinds = [scope.kind for scope in scopes if scope.kind != ItemKind.MESSAGE]
    if others and other_kinds:
        found.update((hit.item.id, _hit(hit)) for hit in _load(others, other_kinds))
    hits = [found[entry.item_id] for entry in winners if entry.item_id in found]
    warnings = [VECTORS_UNAVAILABLE] if embedding.failed else []
    if floor is not None and floor.asked and embedding.vector is None and not embedding.failed:
        warnings.append(MIN_SIMILARITY_IGNORED)
    return SearchResults(hits=hits, warnings=warnings)


def search_each_for_agent(
    *,
    agent,
    query: str,
    top_k: dict[str, int],
    resource_id: uuid.UUID | None = None,
    knowledge_base_ids: tuple[uuid.UUID, ...] = (),
    without_resource: bool = False,
    embedding: QueryEmbedding,
    floor: Floor | None = None,
) -> dict[str, list[Hit]]:
    """Rank each kind on its own, top_k[kind] of it, for one query: what a context shows of
    entries, knowledge and notes, each in its block. The scopes are search_for_agent's; the
    winners of every kind are read in one query (a context read them in one per kind, ~2 ms
    each on bench/context.py). Message kinds, with their ranges, go through search_for_agent.
    """
    if _IN_THREADS & top_k.keys():
        raise ValueError("messages and artifacts are searched with search_for_agent")
    weights = agent_weights(config_effective(agent=agent))
    winners: dict[str, list[Fused]] = {}
    for kind, count in top_k.items():
        scope = _agent_scope(
            agent,
            kind,
            resource_id=resource_id,
            knowledge_base_ids=knowledge_base_ids,
            without_resource=without_resource,
        )
        winners[kind] = rank(
            scopes=[scope],
            query=query,
            top_k=count,
            vector=embedding.vector,
            weights=weights,
            min_similarity=floor.value if floor else None,
        )
    loaded = _load([entry for found in winners.values() for entry in found], list(top_k))
    hits: dict[str, list[Hit]] = {kind: [] for kind in top_k}
    for found in loaded:
        hits[found.item.kind].append(_hit(found))
    return hits


def _agent_scope(
    agent,
    kind: str,
    *,
    thread_id: uuid.UUID | None = None,
    resource_id: uuid.UUID | None = None,
    knowledge_base_ids: tuple[uuid.UUID, ...] = (),
    without_resource: bool = False,
) -> Scope:
    """The scope of one kind that an agent may search (see search_for_agent)."""
    if kind == ItemKind.CHUNK:
        return Scope(kind=kind, project_id=agent.project_id, knowledge_base_ids=knowledge_base_ids)
    if kind == ItemKind.NOTE:
        return Scope(kind=kind, project_id=agent.project_id, agent_id=agent.id, with_shared=True)
    return Scope(
        kind=kind,
        project_id=agent.project_id,
        agent_id=agent.id,
        resource_id=resource_id,
        thread_id=thread_id if kind in _IN_THREADS else None,
        without_resource=without_resource,
    )


def _hit(found: SearchHit) -> Hit:
    item = found.item
    if item.kind == ItemKind.MESSAGE:
        return _message_hit(item.message, found.score, found.signals)
    id, content, metadata = _own_row(item)
    return Hit(
        type=RESULT_TYPES[item.kind],
        id=id,
        content=content,
        score=found.score,
        signals=found.signals,
        thread_id=item.thread_id,
        created_at=item.created_at,
        metadata=metadata,
    )


def _own_row(item: SearchItem) -> tuple[uuid.UUID | int, str, dict]:
    """Return the id, content and metadata a hit shows of the item's own row (not a message).

    An item of a kind always has that kind's row: the relation is None only for other kinds.
    """
    if item.kind == ItemKind.CHUNK:
        chunk = item.chunk
        assert chunk is not None
        return (
            chunk.id,
            chunk.content,
            {
                **chunk.metadata,
                "document_id": str(chunk.document_id),
                "chunk_index": chunk.chunk_index,
                "knowledge_base_id": str(item.knowledge_base_id),
            },
        )
    if item.kind == ItemKind.NOTE:
        note = item.note
        assert note is not None
        return (
            note.id,
            note.content,
            {
                "path": note.path,
                "title": note.title,
                "scope": note.scope,
                "tags": note.tags,
                "version": note.version,
            },
        )
    if item.kind == ItemKind.ARTIFACT:
        artifact = item.artifact
        assert artifact is not None
        # The content is the artifact's text, as indexed (its bytes are deferred).
        return (
            artifact.id,
            item.content,
            {
                "name": artifact.name,
                "kind": artifact.kind,
                "content_type": artifact.content_type,
                "size_bytes": artifact.size_bytes,
                "run_id": str(artifact.run_id),
            },
        )
    entry = item.entry
    assert entry is not None
    return (
        entry.id,
        entry.content,
        {**entry.metadata, "source": entry.source, "status": entry.status},
    )


def _message_hit(message, score: float, signals: dict) -> Hit:
    return Hit(
        type=RESULT_TYPES[ItemKind.MESSAGE],
        id=message.id,
        content=message.content,
        score=score,
        signals=signals,
        thread_id=message.thread_id,
        created_at=message.created_at,
        metadata=message.metadata,
        message_id=message.id,
        seq=message.seq,
        role=message.role,
        kind=message.kind,
        name=message.name,
        payload=message.payload,
        token_count=message.token_count,
    )


def hits_by_id(*, kind: str, ids) -> dict[str, Hit]:
    """Return the items of one kind by the id of their message, chunk, entry or note (as text).

    For re-reading what a stored context showed; the caller knows the ids to be its own.
    """
    relation = _RELATED[kind]
    items = SearchItem.objects.select_related(relation)
    if kind == ItemKind.ARTIFACT:
        items = items.defer("artifact__content")
    items = items.filter(kind=kind, **{f"{relation}_id__in": list(ids)})
    hits = [_hit(SearchHit(item, 0.0, {})) for item in items]
    return {str(hit.id): hit for hit in hits}


def _message_hits(
    winners: list[Fused], before: int, after: int, read_messages: MessagesReader
) -> dict[int, Hit]:
    """Return the winners that are messages as hits by item id, each with the messages before
    and after it in its thread, all read in one query (read_messages).

    A message appears once across all ranges: not in a range when it is itself a hit, nor in
    a later (lower-ranked) hit's range when an earlier hit's range already holds it. The
    ranking already read where most hits sit (conversation.py); the items of the others are
    read for it first.
    """
    messages = [entry for entry in winners if entry.kind == ItemKind.MESSAGE]
    places = {entry.item_id: entry.place for entry in messages if entry.place is not None}
    unplaced = [entry.item_id for entry in messages if entry.place is None]
    if unplaced:
        items = SearchItem.objects.filter(id__in=unplaced, message__isnull=False)
        places.update(
            (item_id, (thread_id, seq))
            for item_id, thread_id, seq in items.values_list("id", "thread_id", "message__seq")
        )
    if not places:
        return {}
    # The ranking's rows name a thread as the database returned it: hex text on SQLite.
    places = {item_id: (_as_uuid(thread), seq) for item_id, (thread, seq) in places.items()}
    by_place = read_messages(places=list(places.values()), before=before, after=after)
    hits = {  # the winners not read were deleted meanwhile
        entry.item_id: _message_hit(by_place[place], entry.score, entry.signals)
        for entry in messages
        if (place := places.get(entry.item_id)) in by_place
    }
    shown = {places[item_id] for item_id in hits}
    for item_id, hit in hits.items():
        thread, seq = places[item_id]
        ranges = []
        for seqs in (range(seq - before, seq), range(seq + 1, seq + after + 1)):
            around = [(thread, at) for at in seqs if (thread, at) in by_place]
            ranges.append([_context_message(by_place[p]) for p in around if p not in shown])
            shown.update(around)
        hit.context = MessageRange(before=ranges[0], after=ranges[1])
    return hits


def _as_uuid(value) -> uuid.UUID:
    return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))


def _context_message(message) -> ContextMessage:
    return ContextMessage(
        id=message.id,
        seq=message.seq,
        role=message.role,
        kind=message.kind,
        name=message.name,
        content=message.content,
        payload=message.payload,
        created_at=message.created_at,
        token_count=message.token_count,
    )


def default_weights() -> FusionWeights:
    """The weights of the settings, with the global defaults of the conversation settings."""
    return FusionWeights(
        lexical=settings.SEARCH_WEIGHT_LEXICAL,
        vector=settings.SEARCH_WEIGHT_VECTOR,
        recency=settings.SEARCH_WEIGHT_RECENCY,
        half_life_days=settings.SEARCH_RECENCY_HALF_LIFE_DAYS,
        k=settings.SEARCH_RRF_K,
        temporal_boost=settings.SEARCH_WEIGHT_TEMPORAL,
        normalized_kinds=frozenset(settings.SEARCH_NORMALIZED_KINDS),
        normalized_lexical=settings.SEARCH_NORMALIZED_WEIGHT_LEXICAL,
        normalized_vector=settings.SEARCH_NORMALIZED_WEIGHT_VECTOR,
        session_follow=settings.SEARCH_SESSION_FOLLOW,
        **_conversation_weights(settings.MEMORY_DEFAULTS),
    )


def agent_weights(config) -> FusionWeights:
    """The weights of the settings, with the conversation settings of an agent's config."""
    return replace(default_weights(), **_conversation_weights(config))


def _conversation_weights(config) -> dict:
    return {
        "neighbour_share": config["search_context_neighbour_share"],
        "session_share": config["search_context_session_share"],
        "session_gap_minutes": config["search_session_gap_minutes"],
    }
