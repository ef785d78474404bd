"""POST /search: one query over the agent's messages, entries and notes, and its project's
knowledge and shared notes."""

import uuid

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.api.v1.common import StrictSerializer, principal
from apps.core.errors import NotFound
from apps.knowledge.selectors import knowledge_base_get, knowledge_base_list
from apps.search.models import ItemKind
from apps.search.results import SearchAnswer, search_answer
from apps.search.selectors import (
    MIN_SIMILARITY_IGNORED,
    VECTORS_UNAVAILABLE,
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


class SearchApi(APIView):
    @extend_schema(
        operation_id="search",
        request=SearchInSerializer,
        responses=SearchAnswer,
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
        kb_ids: tuple[uuid.UUID, ...] = ()
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
        return Response(search_answer(found))
