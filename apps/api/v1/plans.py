"""Plan (compare-and-set by version) and the iteration log of a thread."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from apps.api.v1.common import (
    INTEGER_MAX,
    PAGE_PARAMETERS,
    ApiView,
    MetadataField,
    StrictSerializer,
    paginate,
    paginated,
    principal,
)
from apps.runstate import selectors as runstate_selectors
from apps.runstate import services as runstate_services
from apps.runstate.models import IterationOutcome
from apps.threads import selectors as thread_selectors

STEP_STATUSES = ["pending", "in_progress", "done", "failed", "skipped"]


def choice_field(values: list[str], **kwargs) -> serializers.ChoiceField:
    """A ChoiceField whose error lists the allowed values, so a client can fix its request."""
    allowed = ", ".join(values)
    return serializers.ChoiceField(
        choices=values,
        error_messages={"invalid_choice": f'"{{input}}" is not allowed; one of: {allowed}.'},
        **kwargs,
    )


class PlanStepSerializer(StrictSerializer):
    id = serializers.CharField(max_length=100, required=False)
    title = serializers.CharField(max_length=1000)
    status = choice_field(STEP_STATUSES, default="pending")
    notes = serializers.CharField(required=False, allow_blank=True)


class PlanSerializer(serializers.Serializer):
    thread_id = serializers.UUIDField()
    version = serializers.IntegerField(help_text="0 while the thread has no plan.")
    goal = serializers.CharField()
    phase = serializers.CharField()
    iteration = serializers.IntegerField()
    steps = PlanStepSerializer(many=True)
    metadata = serializers.DictField()
    updated_at = serializers.DateTimeField(allow_null=True)


class PlanApi(ApiView):
    class PlanPutSerializer(StrictSerializer):
        version = serializers.IntegerField(
            min_value=0,
            max_value=INTEGER_MAX,
            help_text="The version you read (0 when there was no plan).",
        )
        goal = serializers.CharField(allow_blank=True, default="")
        phase = serializers.CharField(max_length=200, allow_blank=True, default="")
        iteration = serializers.IntegerField(min_value=0, max_value=INTEGER_MAX, default=0)
        steps = PlanStepSerializer(many=True, default=list)
        metadata = MetadataField()

    @extend_schema(operation_id="plan_read", responses=PlanSerializer)
    def get(self, request, thread_id):
        thread = thread_selectors.thread_get(agent=principal(request).agent, thread_id=thread_id)
        plan = runstate_selectors.plan_get(thread=thread)
        return Response(_plan_body(thread, plan))

    @extend_schema(
        operation_id="plan_replace",
        request=PlanPutSerializer,
        responses=PlanSerializer,
        description="Replace the plan if `version` is still current; otherwise 409 with the "
        "current version in details.",
    )
    def put(self, request, thread_id):
        thread = thread_selectors.thread_get(agent=principal(request).agent, thread_id=thread_id)
        data = self.PlanPutSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        fields = dict(data.validated_data)
        version = fields.pop("version")
        plan = runstate_services.plan_put(thread=thread, expected_version=version, fields=fields)
        return Response(_plan_body(thread, plan))


def _plan_body(thread, plan) -> dict:
    if plan is None:
        empty = {"version": 0, "goal": "", "phase": "", "iteration": 0, "steps": [], "metadata": {}}
        return PlanSerializer({"thread_id": thread.id, "updated_at": None, **empty}).data
    return PlanSerializer(plan).data


class IterationSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    thread_id = serializers.UUIDField()
    run_id = serializers.UUIDField(allow_null=True)
    task = serializers.CharField()
    attempt = serializers.IntegerField()
    outcome = serializers.CharField()
    summary = serializers.CharField()
    error = serializers.CharField()
    metadata = serializers.DictField()
    created_at = serializers.DateTimeField()


class IterationListApi(ApiView):
    class IterationCreateSerializer(StrictSerializer):
        task = serializers.CharField(max_length=200)
        outcome = choice_field(IterationOutcome.values)
        run_id = serializers.UUIDField(required=False, allow_null=True, default=None)
        summary = serializers.CharField(allow_blank=True, default="")
        error = serializers.CharField(allow_blank=True, default="")
        metadata = MetadataField()

        def validate(self, attrs):
            # As a run's finish: a briefing would read a succeeded attempt's error as a failure.
            if attrs["outcome"] == IterationOutcome.SUCCEEDED and attrs["error"].strip():
                raise serializers.ValidationError(
                    {"error": ["A succeeded attempt has no error: log it as failed, or leave out."]}
                )
            return attrs

    query_parameters = [
        OpenApiParameter("task", str, description="Only attempts at this task."),
        *PAGE_PARAMETERS,
    ]

    @extend_schema(
        operation_id="iterations_list",
        responses=paginated(IterationSerializer),
    )
    def get(self, request, thread_id):
        thread = thread_selectors.thread_get(agent=principal(request).agent, thread_id=thread_id)
        iterations = runstate_selectors.iteration_list(
            thread=thread, task=request.query_params.get("task")
        )
        return paginate(request, self, iterations, IterationSerializer, ordering="id")

    @extend_schema(
        operation_id="iterations_append",
        request=IterationCreateSerializer,
        responses={201: IterationSerializer},
        description="Log an attempt; attempts are numbered per task.",
    )
    def post(self, request, thread_id):
        agent = principal(request).agent
        thread = thread_selectors.thread_get(agent=agent, thread_id=thread_id)
        data = self.IterationCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        fields = dict(data.validated_data)
        run_id = fields.pop("run_id")
        run = None
        if run_id is not None:
            run = thread_selectors.run_in_thread(thread=thread, run_id=run_id)
            if run is None:
                raise serializers.ValidationError({"run_id": ["Not a run of this thread."]})
        iteration = runstate_services.iteration_append(thread=thread, run=run, **fields)
        return Response(IterationSerializer(iteration).data, status=status.HTTP_201_CREATED)
