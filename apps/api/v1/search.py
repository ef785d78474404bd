"""POST /search: one query over the agent's messages, entries and notes, and its project's
knowledge and shared notes."""

from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.api.v1.common import StrictSerializer, principal
from apps.core.errors import NotFound
from apps.knowledge.selectors import knowledge_base_get, knowledge_base_list
from apps.search.models import ItemKind
from apps.search.selectors import (
    MIN_SIMILARITY_IGNORED,
    VECTORS_UNAVAILABLE,
    ContextMessage,
    Hit,
    search_for_agent,
    similarity_floor,
)
from apps.tenancy.selectors import resource_find
from apps.threads.selectors import thread_check

SCOPE_KINDS = {
    "messages": ItemKind.MESSAGE,
    "knowledge": ItemKind.CHUNK,
    "episodic": ItemKind.ENTRY,
    "notes": ItemKind.NOTE,
    "artifacts": ItemKind.ARTIFACT,
}


def min_similarity_field():
    return serializers.FloatField(
        min_value=0.0,
        max_value=1.0,
        required=False,
        help_text="Drop hits that only the vectors found whose cosine similarity to the query is "
        "below this (word matches stay); default: the search_min_similarity setting. Ignored "
        "(and `warnings` says so) without vectors.",
    )


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
    min_similarity = min_similarity_field()


class ContextMessageSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    seq = serializers.IntegerField()
    role = serializers.CharField()
    kind = serializers.CharField()
    name = serializers.CharField()
    content = serializers.CharField()
    payload = serializers.JSONField(allow_null=True)
    created_at = serializers.DateTimeField()


# Its own component name: the context API's ContextSerializer is "Context" in the schema.
@extend_schema_serializer(component_name="SearchContext")
class ContextSerializer(serializers.Serializer):
    before = ContextMessageSerializer(many=True)
    after = ContextMessageSerializer(many=True)


class SearchResultSerializer(serializers.Serializer):
    type = serializers.ChoiceField(choices=["message", "knowledge", "episodic", "note"])
    id = serializers.CharField(help_text="The message, chunk, entry or note id.")
    content = serializers.CharField()
    score = serializers.FloatField(help_text="Fused score; higher is better.")
    signals = serializers.DictField(
        help_text="Per signal: rank and raw score (and normalized, where scores are fused so); "
        "recency: age; time: the window of days the query names and 1 if the message is inside "
        "it, else 0; context (messages): the score gained from the neighbour and the session, "
        "and the seq of the message each came from."
    )
    thread_id = serializers.UUIDField(allow_null=True)
    message_id = serializers.UUIDField(allow_null=True)
    seq = serializers.IntegerField(allow_null=True)
    role = serializers.CharField(allow_null=True, help_text="Message hits: the message's role.")
    kind = serializers.CharField(allow_null=True, help_text="Message hits: message, tool_call…")
    name = serializers.CharField(allow_null=True, help_text="Message hits: the tool's name.")
    payload = serializers.JSONField(allow_null=True, help_text="Message hits: the payload.")
    metadata = serializers.DictField()
    context = ContextSerializer(
        allow_null=True, help_text="Message hits: the messages before and after it."
    )


class WarningSerializer(serializers.Serializer):
    code = serializers.ChoiceField(
        choices=[VECTORS_UNAVAILABLE["code"], MIN_SIMILARITY_IGNORED["code"]]
    )
    message = serializers.CharField()


def warnings_field():
    return WarningSerializer(
        many=True,
        required=False,
        help_text="Present when results were ranked without a signal, such as vectors when the "
        "embedder failed.",
    )


def with_warnings(body: dict, warnings: list[dict]) -> dict:
    """Add the `warnings` key to a response body when the search has any to give."""
    if warnings:
        body["warnings"] = warnings
    return body


def result_json(hit: Hit) -> dict:
    """Return a hit as SearchResultSerializer describes it, built directly.

    The serializer stays the schema; running its per-field machinery over ten hits and the
    messages around them took 1.4 of a 15 ms thread search (bench/search.py's thread case,
    in-process, median). Datetimes are left to the renderer, which writes them as DRF does.
    """
    context = hit.context
    return {
        "type": hit.type,
        "id": str(hit.id),
        "content": hit.content,
        "score": hit.score,
        "signals": hit.signals,
        "thread_id": _text(hit.thread_id),
        "message_id": _text(hit.message_id),
        "seq": hit.seq,
        "role": hit.role,
        "kind": hit.kind,
        "name": hit.name,
        "payload": hit.payload,
        "metadata": hit.metadata,
        "context": None
        if context is None
        else {
            "before": [_context_message(message) for message in context.before],
            "after": [_context_message(message) for message in context.after],
        },
    }


def _context_message(message: ContextMessage) -> dict:
    return {
        "id": str(message.id),
        "seq": message.seq,
        "role": message.role,
        "kind": message.kind,
        "name": message.name,
        "content": message.content,
        "payload": message.payload,
        "created_at": message.created_at,
    }


def _text(value) -> str | None:
    return None if value is None else str(value)


class SearchOutSerializer(serializers.Serializer):
    results = SearchResultSerializer(many=True)
    warnings = warnings_field()


class SearchApi(APIView):
    @extend_schema(
        operation_id="search",
        request=SearchInSerializer,
        responses=SearchOutSerializer,
        description="Hybrid search (full-text + vectors when an embedder is configured + "
        "recency), fused by rank. Message hits carry role, kind, name and payload, and the "
        "messages around them. If the embedder fails, results are full-text + recency and "
        "`warnings` says so.",
    )
    def post(self, request):
        data = SearchInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        params = data.validated_data
        agent = principal(request).agent
        thread_id = params.get("thread_id")
        resource_id = None
        if "resource_id" in params:
            resource = resource_find(project=agent.project, external_id=params["resource_id"])
            if resource is None:
                raise NotFound(f"No resource {params['resource_id']!r} in this project.")
            resource_id = resource.id
        kb_ids = ()
        if "knowledge_base" in params:
            kb_ids = (knowledge_base_get(project=agent.project, slug=params["knowledge_base"]).id,)
        elif "knowledge" in params["scopes"]:
            kb_ids = tuple(knowledge_base_list(project=agent.project).values_list("id", flat=True))
        window = params.get("message_range")
        found = search_for_agent(
            agent=agent,
            query=params["query"],
            kinds=[SCOPE_KINDS[name] for name in params["scopes"]],
            thread_id=thread_id,
            resource_id=resource_id,
            knowledge_base_ids=kb_ids,
            top_k=params["top_k"],
            message_range=(window["before"], window["after"]) if window else None,
            floor=similarity_floor(agent=agent, value=params.get("min_similarity")),
        )
        # Another agent's thread is a 404. The message scope holds only this agent's items, so
        # a message hit in the thread proves it the agent's; the check's own query (about 1 ms
        # of a 15 ms thread search) runs only when none came.
        if thread_id is not None and not any(
            hit.type == "message" and hit.thread_id == thread_id for hit in found.hits
        ):
            thread_check(agent=agent, thread_id=thread_id)
        body = {"results": [result_json(hit) for hit in found.hits]}
        return Response(with_warnings(body, found.warnings))
