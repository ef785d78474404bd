"""POST /search: one query over the agent's messages, entries and notes, and its project's
knowledge and shared notes."""

from typing import get_args

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from apps.api.v1.common import ApiView, StrictSerializer, principal
from apps.retrieval.selectors import SCOPE_NAMES, retrieve
from apps.search.results import SearchAnswer, WarningCode, search_answer


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
        child=serializers.ChoiceField(choices=list(SCOPE_NAMES)),
        allow_empty=False,
        default=lambda: ["messages"],
        help_text="What to search; left out, messages only.",
    )
    thread_id = serializers.UUIDField(required=False)
    resource_id = serializers.CharField(max_length=200, required=False)
    knowledge_base = serializers.SlugField(required=False)
    top_k = serializers.IntegerField(min_value=1, max_value=50, default=10)
    message_range = MessageRangeSerializer(required=False)
    min_similarity = min_similarity_field()

    # The scopes each filter narrows: one sent with none of them would be ignored.
    FILTER_SCOPES = {
        "thread_id": ("messages", "artifacts"),
        "resource_id": ("messages", "episodic", "artifacts"),
        "knowledge_base": ("knowledge",),
        "message_range": ("messages",),
    }

    def validate(self, attrs):
        wrong = {
            name: [
                f"Narrows the {' and '.join(applies)} "
                f"{'scope' if len(applies) == 1 else 'scopes'} only; add "
                f"{'it' if len(applies) == 1 else 'one'} to scopes (without scopes only "
                f"messages are searched) or leave {name} out."
            ]
            for name, applies in self.FILTER_SCOPES.items()
            if name in attrs and not set(applies) & set(attrs["scopes"])
        }
        if wrong:
            raise serializers.ValidationError(wrong)
        return attrs


class WarningSerializer(serializers.Serializer):
    code = serializers.ChoiceField(choices=list(get_args(WarningCode)))
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


class SearchApi(ApiView):
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
        window = params.get("message_range")
        found = retrieve(
            agent=principal(request).agent,
            query=params["query"],
            scopes=params["scopes"],
            thread_id=params.get("thread_id"),
            resource=params.get("resource_id"),
            knowledge_base=params.get("knowledge_base"),
            top_k=params["top_k"],
            message_range=(window["before"], window["after"]) if window else None,
            min_similarity=params.get("min_similarity"),
        )
        return Response(search_answer(found))
