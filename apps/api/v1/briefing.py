"""A task's retry briefing: earlier attempts, the current plan step, relevant observations."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from apps.agenttools.services import briefing_build
from apps.api.v1.common import ApiView, StrictSerializer, principal, query_values
from apps.threads.selectors import thread_get


class BriefingSerializer(serializers.Serializer):
    thread_id = serializers.UUIDField()
    task = serializers.CharField()
    max_tokens = serializers.IntegerField()
    tokens = serializers.IntegerField()
    text = serializers.CharField(
        allow_blank=True, help_text="Append to the sub-agent's briefing; empty: nothing to say."
    )
    attempts = serializers.ListField(child=serializers.UUIDField(), help_text="Included.")
    attempts_left_out = serializers.IntegerField(help_text="The oldest, cut for length.")
    plan_step = serializers.DictField(allow_null=True)
    observations = serializers.ListField(child=serializers.UUIDField())


class BriefingApi(ApiView):
    class BriefingInSerializer(StrictSerializer):
        task = serializers.CharField(max_length=200, required=False)
        max_tokens = serializers.IntegerField(min_value=50, max_value=200_000, default=1000)

    query_parameters = [
        OpenApiParameter(
            "task", str, description="The task, as logged; default: the latest attempt's."
        ),
        OpenApiParameter("max_tokens", int, description="Budget of the text (default 1000)."),
    ]

    @extend_schema(
        operation_id="briefing_read",
        responses=BriefingSerializer,
        description="The text to append to a sub-agent's briefing when it retries a task: "
        "the earlier attempts from the iteration log (oldest first, with their errors), the "
        "plan's current step and the thread's observations about the task, within max_tokens.",
    )
    def get(self, request, thread_id):
        thread = thread_get(agent=principal(request).agent, thread_id=thread_id)
        params = self.BriefingInSerializer(data=query_values(request))
        params.is_valid(raise_exception=True)
        briefing = briefing_build(thread=thread, **params.validated_data)
        return Response(BriefingSerializer(briefing).data)
