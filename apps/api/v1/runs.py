"""Runs: start one in a thread, finish it with a status, read it."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from apps.api.v1.common import ApiView, MetadataField, StrictSerializer, principal
from apps.threads import selectors, services
from apps.threads.models import FINISHED_STATUSES, RunStatus


class RunSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    thread_id = serializers.UUIDField()
    name = serializers.CharField()
    status = serializers.ChoiceField(
        choices=RunStatus.choices,
        help_text="running; suspended while a checkpoint waits to be resumed; or how it ended.",
    )
    summary = serializers.CharField()
    error = serializers.CharField()
    metadata = serializers.DictField()
    created_at = serializers.DateTimeField(help_text="When the run started.")
    finished_at = serializers.DateTimeField(allow_null=True)


class RunStartApi(ApiView):
    class RunStartSerializer(StrictSerializer):
        name = serializers.CharField(max_length=200, required=False, default="", allow_blank=True)
        metadata = MetadataField()

    @extend_schema(
        operation_id="runs_start", request=RunStartSerializer, responses={201: RunSerializer}
    )
    def post(self, request, thread_id):
        thread = selectors.thread_get(agent=principal(request).agent, thread_id=thread_id)
        data = self.RunStartSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        run = services.run_start(thread=thread, **data.validated_data)
        return Response(RunSerializer(run).data, status=status.HTTP_201_CREATED)


class RunDetailApi(ApiView):
    @extend_schema(operation_id="runs_read", responses=RunSerializer)
    def get(self, request, run_id):
        run = selectors.run_get(agent=principal(request).agent, run_id=run_id)
        return Response(RunSerializer(run).data)


class RunFinishApi(ApiView):
    class RunFinishSerializer(StrictSerializer):
        status = serializers.ChoiceField(choices=FINISHED_STATUSES)
        summary = serializers.CharField(required=False, default="", allow_blank=True)
        error = serializers.CharField(required=False, default="", allow_blank=True)
        metadata = MetadataField(help_text="Merged into the run's metadata.")

        def validate(self, attrs):
            if attrs["status"] == RunStatus.SUCCEEDED and attrs["error"].strip():
                raise serializers.ValidationError(
                    {"error": ["A succeeded run has no error: finish it as failed, or leave out."]}
                )
            return attrs

    @extend_schema(
        operation_id="runs_finish",
        request=RunFinishSerializer,
        responses=RunSerializer,
        description="Finish a running or suspended run; finishing it again is a 409.",
    )
    def post(self, request, run_id):
        run = selectors.run_get(agent=principal(request).agent, run_id=run_id)
        data = self.RunFinishSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        run = services.run_finish(run=run, **data.validated_data)
        return Response(RunSerializer(run).data)
