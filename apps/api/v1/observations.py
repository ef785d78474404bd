"""A thread's observational memory and its compaction summary (written in the background)."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from apps.api.v1.common import (
    PAGE_PARAMETERS,
    ApiView,
    paginate,
    paginated,
    principal,
    query_values,
)
from apps.observations import selectors as observation_selectors
from apps.threads import selectors as thread_selectors


class ObservationSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    thread_id = serializers.UUIDField()
    generation = serializers.IntegerField()
    first_seq = serializers.IntegerField()
    last_seq = serializers.IntegerField()
    tokens = serializers.IntegerField()
    content = serializers.CharField()
    is_reflection = serializers.BooleanField()
    superseded_by = serializers.UUIDField(source="superseded_by_id", allow_null=True)
    method = serializers.CharField(help_text="llm, extractive, or concatenated.")
    model = serializers.CharField(help_text="Empty when no model wrote it.")
    prompt_version = serializers.CharField()
    created_at = serializers.DateTimeField()


class ObservationListApi(ApiView):
    class FilterSerializer(serializers.Serializer):
        status = serializers.ChoiceField(
            choices=["active", "superseded"],
            required=False,
            error_messages={"invalid_choice": "Must be active or superseded."},
        )

    query_parameters = [
        OpenApiParameter(
            "status",
            str,
            enum=["active", "superseded"],
            description="Only the active set (covering seq 1…K) or only superseded rows.",
        ),
        *PAGE_PARAMETERS,
    ]

    @extend_schema(
        operation_id="observations_list",
        responses=paginated(ObservationSerializer),
        description="The thread's observations and reflections, active and superseded, oldest "
        "first (cursor pagination).",
    )
    def get(self, request, thread_id):
        thread = thread_selectors.thread_get(agent=principal(request).agent, thread_id=thread_id)
        query = self.FilterSerializer(data=query_values(request))
        query.is_valid(raise_exception=True)
        observations = observation_selectors.observation_list(
            thread=thread, status=query.validated_data.get("status")
        )
        return paginate(request, self, observations, ObservationSerializer, ordering="id")


class SummarySerializer(serializers.Serializer):
    thread_id = serializers.UUIDField()
    version = serializers.IntegerField(help_text="0 while the thread has no summary.")
    content = serializers.CharField(allow_blank=True)
    tokens = serializers.IntegerField()
    covers_up_to_seq = serializers.IntegerField()
    method = serializers.CharField(allow_blank=True)
    model = serializers.CharField(allow_blank=True)
    prompt_version = serializers.CharField(allow_blank=True)
    created_at = serializers.DateTimeField(allow_null=True)


class SummaryApi(ApiView):
    @extend_schema(
        operation_id="summary_read",
        responses=SummarySerializer,
        description="The latest rolling-compaction summary; version 0 and empty content while "
        "there is none.",
    )
    def get(self, request, thread_id):
        thread = thread_selectors.thread_get(agent=principal(request).agent, thread_id=thread_id)
        summary = observation_selectors.summary_latest(thread=thread)
        if summary is None:
            empty = {"version": 0, "content": "", "tokens": 0, "covers_up_to_seq": 0}
            none = {"method": "", "model": "", "prompt_version": "", "created_at": None}
            return Response(SummarySerializer({"thread_id": thread.id, **empty, **none}).data)
        return Response(SummarySerializer(summary).data)
