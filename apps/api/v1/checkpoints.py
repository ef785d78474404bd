"""Human-in-the-loop checkpoints of a run (resumed at most once) and the run's UI snapshot."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from apps.api.v1.common import (
    PAGE_PARAMETERS,
    ApiView,
    JsonObjectField,
    StorableJsonField,
    StrictSerializer,
    actor_name,
    paginate,
    paginated,
    principal,
)
from apps.runstate import selectors as runstate_selectors
from apps.runstate import services as runstate_services
from apps.threads import selectors as thread_selectors


class CheckpointSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    run_id = serializers.UUIDField()
    status = serializers.CharField()
    reason = serializers.CharField()
    state = serializers.JSONField()
    resume_input = serializers.JSONField(allow_null=True)
    created_at = serializers.DateTimeField()
    resumed_at = serializers.DateTimeField(allow_null=True)


class CheckpointListApi(ApiView):
    class CheckpointCreateSerializer(StrictSerializer):
        state = JsonObjectField()
        reason = serializers.CharField(max_length=500, allow_blank=True, default="")

    query_parameters = PAGE_PARAMETERS

    @extend_schema(
        operation_id="checkpoints_list",
        responses=paginated(CheckpointSerializer),
    )
    def get(self, request, run_id):
        run = thread_selectors.run_get(agent=principal(request).agent, run_id=run_id)
        checkpoints = runstate_selectors.checkpoint_list(run=run)
        return paginate(request, self, checkpoints, CheckpointSerializer)

    @extend_schema(
        operation_id="checkpoints_create",
        request=CheckpointCreateSerializer,
        responses={201: CheckpointSerializer},
    )
    def post(self, request, run_id):
        run = thread_selectors.run_get(agent=principal(request).agent, run_id=run_id)
        data = self.CheckpointCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        checkpoint = runstate_services.checkpoint_create(run=run, **data.validated_data)
        return Response(CheckpointSerializer(checkpoint).data, status=status.HTTP_201_CREATED)


class CheckpointDetailApi(ApiView):
    @extend_schema(operation_id="checkpoints_read", responses=CheckpointSerializer)
    def get(self, request, checkpoint_id):
        checkpoint = runstate_selectors.checkpoint_get(
            agent=principal(request).agent, checkpoint_id=checkpoint_id
        )
        return Response(CheckpointSerializer(checkpoint).data)


class CheckpointResumeApi(ApiView):
    class CheckpointResumeSerializer(StrictSerializer):
        input = StorableJsonField(
            required=False, default=None, help_text="The human's answer, kept with the checkpoint."
        )

    @extend_schema(
        operation_id="checkpoints_resume",
        request=CheckpointResumeSerializer,
        responses=CheckpointSerializer,
        description="Resume a suspended checkpoint and return its state. A checkpoint resumes "
        "once; a second resume (even a concurrent one) is a 409.",
    )
    def post(self, request, checkpoint_id):
        checkpoint = runstate_selectors.checkpoint_get(
            agent=principal(request).agent, checkpoint_id=checkpoint_id
        )
        data = self.CheckpointResumeSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        checkpoint = runstate_services.checkpoint_resume(
            checkpoint=checkpoint,
            resume_input=data.validated_data["input"],
            actor=actor_name(request),
        )
        return Response(CheckpointSerializer(checkpoint).data)


class SnapshotSerializer(serializers.Serializer):
    run_id = serializers.UUIDField()
    version = serializers.IntegerField()
    tree = serializers.JSONField()
    updated_at = serializers.DateTimeField()


class SnapshotApi(ApiView):
    class SnapshotPutSerializer(StrictSerializer):
        tree = JsonObjectField()

    @extend_schema(operation_id="snapshot_read", responses=SnapshotSerializer)
    def get(self, request, run_id):
        run = thread_selectors.run_get(agent=principal(request).agent, run_id=run_id)
        snapshot = runstate_selectors.snapshot_get(run=run)
        return Response(SnapshotSerializer(snapshot).data)

    @extend_schema(
        operation_id="snapshot_replace", request=SnapshotPutSerializer, responses=SnapshotSerializer
    )
    def put(self, request, run_id):
        run = thread_selectors.run_get(agent=principal(request).agent, run_id=run_id)
        data = self.SnapshotPutSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        snapshot = runstate_services.snapshot_put(run=run, tree=data.validated_data["tree"])
        return Response(SnapshotSerializer(snapshot).data)
