"""POST /search: one query over the agent's messages, its project's knowledge and its entries."""

import uuid
from dataclasses import dataclass

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.api.v1.common import StrictSerializer, iso_datetime, principal
from apps.core.errors import NotFound
from apps.knowledge.selectors import knowledge_base_get, knowledge_base_list
from apps.memconfig.selectors import config_effective
from apps.search.models import ItemKind
from apps.search.scope import Scope
from apps.search.selectors import (
    VECTORS_UNAVAILABLE,
    QueryEmbedding,
    items_values,
    query_embed,
    rank,
)
from apps.tenancy.selectors import resource_find
from apps.threads.selectors import message_context, thread_get

SCOPE_KINDS = {
    "messages": ItemKind.MESSAGE,
    "knowledge": ItemKind.CHUNK,
    "episodic": ItemKind.ENTRY,
}
RESULT_TYPES = {
    ItemKind.MESSAGE: "message",
    ItemKind.CHUNK: "knowledge",
    ItemKind.ENTRY: "episodic",
}


class MessageRangeSerializer(StrictSerializer):
    before = serializers.IntegerField(min_value=0, max_value=20)
    after = serializers.IntegerField(min_value=0, max_value=20)


class SearchInSerializer(StrictSerializer):
    query = serializers.CharField(max_length=2000)
    scopes = serializers.ListField(
        child=serializers.ChoiceField(choices=list(SCOPE_KINDS)),
        allow_empty=False,
        default=lambda: ["messages"],
    )
    thread_id = serializers.UUIDField(required=False)
    resource_id = serializers.CharField(max_length=200, required=False)
    knowledge_base = serializers.SlugField(required=False)
    top_k = serializers.IntegerField(min_value=1, max_value=50, default=10)
    message_range = MessageRangeSerializer(required=False)


class ContextMessageSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    seq = serializers.IntegerField()
    role = serializers.CharField()
    kind = serializers.CharField()
    content = serializers.CharField()
    created_at = serializers.DateTimeField()


class ContextSerializer(serializers.Serializer):
    before = ContextMessageSerializer(many=True)
    after = ContextMessageSerializer(many=True)


class SearchResultSerializer(serializers.Serializer):
    type = serializers.ChoiceField(choices=["message", "knowledge", "episodic"])
    id = serializers.CharField(help_text="The message, chunk or entry id.")
    content = serializers.CharField()
    score = serializers.FloatField(help_text="Fused score; higher is better.")
    signals = serializers.DictField(help_text="Per signal: rank and raw score; recency: age.")
    thread_id = serializers.UUIDField(allow_null=True)
    message_id = serializers.UUIDField(allow_null=True)
    seq = serializers.IntegerField(allow_null=True)
    metadata = serializers.DictField()
    context = ContextSerializer(allow_null=True)


class WarningSerializer(serializers.Serializer):
    code = serializers.ChoiceField(choices=[VECTORS_UNAVAILABLE["code"]])
    message = serializers.CharField()


def warnings_field():
    return WarningSerializer(
        many=True,
        required=False,
        help_text="Present when results were ranked without a signal, such as vectors when the "
        "embedder failed.",
    )


def with_warnings(body: dict, embedding: QueryEmbedding) -> dict:
    """Add the `warnings` key to a response body when the query could not be embedded."""
    if embedding.failed:
        body["warnings"] = [VECTORS_UNAVAILABLE]
    return body


class SearchOutSerializer(serializers.Serializer):
    results = SearchResultSerializer(many=True)
    warnings = warnings_field()


class SearchApi(APIView):
    @extend_schema(
        operation_id="search",
        request=SearchInSerializer,
        responses=SearchOutSerializer,
        description="Hybrid search (full-text + vectors when an embedder is configured + "
        "recency), fused by rank. Message hits carry the messages around them. If the embedder "
        "fails, results are full-text + recency and `warnings` says so.",
    )
    def post(self, request):
        data = SearchInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        params = data.validated_data
        agent = principal(request).agent
        scopes = _scopes(agent, params)
        embedding = query_embed(project_id=agent.project_id, query=params["query"])
        ranked = rank(
            scopes=scopes, query=params["query"], top_k=params["top_k"], vector=embedding.vector
        )
        kinds = {scope.kind for scope in scopes}
        rows = items_values([entry.item_id for entry in ranked], result_fields(kinds))
        hits = [(entry, rows[entry.item_id]) for entry in ranked if entry.item_id in rows]
        found_messages = any(row["kind"] == ItemKind.MESSAGE for _, row in hits)
        if "thread_id" in params and not found_messages:
            # The thread scope holds only the agent's own thread, so a message hit proves the
            # thread is the agent's; without one, an unknown thread must still be a 404.
            thread_get(agent=agent, thread_id=params["thread_id"])
        window = params.get("message_range")
        if window is None and found_messages:  # the range applies to message hits only
            window = _default_range(agent)
        return Response(with_warnings({"results": search_results(hits, window)}, embedding))


def _default_range(agent) -> dict:
    config = config_effective(agent=agent)
    return {
        "before": config["semantic_recall_range_before"],
        "after": config["semantic_recall_range_after"],
    }


def _scopes(agent, params) -> list[Scope]:
    thread_id = params.get("thread_id")
    resource = None
    if "resource_id" in params:
        resource = resource_find(project=agent.project, external_id=params["resource_id"])
        if resource is None:
            raise NotFound(f"No resource {params['resource_id']!r} in this project.")
    kb_ids = ()
    if "knowledge_base" in params:
        kb_ids = (knowledge_base_get(project=agent.project, slug=params["knowledge_base"]).id,)
    elif "knowledge" in params["scopes"]:
        kb_ids = tuple(knowledge_base_list(project=agent.project).values_list("id", flat=True))
    scopes = []
    for name in dict.fromkeys(params["scopes"]):
        kind = SCOPE_KINDS[name]
        if kind == ItemKind.CHUNK:
            scopes.append(Scope(kind=kind, project_id=agent.project_id, knowledge_base_ids=kb_ids))
            continue
        scopes.append(
            Scope(
                kind=kind,
                project_id=agent.project_id,
                agent_id=agent.id,
                resource_id=resource.id if resource else None,
                thread_id=thread_id if kind == ItemKind.MESSAGE else None,
            )
        )
    return scopes


# What a result shows of each kind's own row, read with the item (see search_results).
_RESULT_FIELDS = {
    ItemKind.MESSAGE: ("message_id", "message__seq", "message__content", "message__metadata"),
    ItemKind.CHUNK: ("chunk_id", "chunk__metadata", "chunk__document_id", "chunk__chunk_index"),
    ItemKind.ENTRY: ("entry_id", "entry__metadata", "entry__source", "entry__status"),
}


def result_fields(kinds) -> tuple[str, ...]:
    """Return the item fields search_results() needs for hits of these kinds."""
    fields = ("kind", "content", "thread_id", "knowledge_base_id")
    return fields + tuple(field for kind in kinds for field in _RESULT_FIELDS[kind])


@dataclass(frozen=True)
class _MessageHit:
    id: uuid.UUID
    thread_id: uuid.UUID
    seq: int


def search_results(hits, window: dict | None) -> list[dict]:
    """Render hits, with the context range of each message hit (no message shown twice).

    hits are (ranked entry, item row) pairs, the row holding result_fields() of its kind.
    window ({"before": n, "after": n}) may be None only when no hit is a message.
    """
    messages = [
        _MessageHit(row["message_id"], row["thread_id"], row["message__seq"])
        for _, row in hits
        if row["kind"] == ItemKind.MESSAGE
    ]
    context = {}
    if messages:
        context = message_context(hits=messages, before=window["before"], after=window["after"])
    results = []
    for entry, row in hits:
        kind = row["kind"]
        result = {
            "type": RESULT_TYPES[kind],
            "content": row["content"],
            "score": entry.score,
            "signals": entry.signals,
            "thread_id": str(row["thread_id"]) if row["thread_id"] else None,
            "message_id": None,
            "seq": None,
            "metadata": {},
            "context": None,
        }
        if kind == ItemKind.MESSAGE:
            before, after = context[row["message_id"]]
            result.update(
                id=str(row["message_id"]),
                content=row["message__content"],
                message_id=str(row["message_id"]),
                seq=row["message__seq"],
                metadata=row["message__metadata"],
                context={"before": _context(before), "after": _context(after)},
            )
        elif kind == ItemKind.CHUNK:
            result.update(
                id=str(row["chunk_id"]),
                metadata={
                    **row["chunk__metadata"],
                    "document_id": str(row["chunk__document_id"]),
                    "chunk_index": row["chunk__chunk_index"],
                    "knowledge_base_id": str(row["knowledge_base_id"]),
                },
            )
        else:
            result.update(
                id=str(row["entry_id"]),
                metadata={
                    **row["entry__metadata"],
                    "source": row["entry__source"],
                    "status": row["entry__status"],
                },
            )
        results.append(result)
    # Built as plain data: DRF's serializers cost more than the search for a page of hits.
    # tests/search/test_search_api.py keeps this equal to SearchResultSerializer's output.
    return results


def _context(messages) -> list[dict]:
    return [
        {
            "id": str(m["id"]),
            "seq": m["seq"],
            "role": m["role"],
            "kind": m["kind"],
            "content": m["content"],
            "created_at": iso_datetime(m["created_at"]),
        }
        for m in messages
    ]
