"""POST /runs: open a session in one call, resolving or creating its thread by chat id."""

from django.db import transaction
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from apps.api.v1.common import ApiView, MetadataField, StrictSerializer, principal
from apps.api.v1.runs import RunSerializer
from apps.threads import services


class RunStartedSerializer(RunSerializer):
    thread_created = serializers.BooleanField(help_text="True when this call made the thread.")


class RunOpenApi(ApiView):
    class RunOpenSerializer(StrictSerializer):
        channel = serializers.CharField(max_length=64, required=False, default="")
        external_id = serializers.CharField(
            max_length=200, help_text="The chat's id on the channel; the thread is found by it."
        )
        resource_id = serializers.CharField(max_length=200, required=False, allow_blank=False)
        name = serializers.CharField(max_length=200, required=False, default="", allow_blank=True)
        metadata = MetadataField(help_text="The run's metadata.")

    @extend_schema(
        operation_id="runs_open",
        request=RunOpenSerializer,
        responses={201: RunStartedSerializer},
        description="Resolve or create the agent's thread with this channel and external_id "
        "and start a run in it, in one transaction. Concurrent calls share one thread. An "
        "existing thread of another resource_id is a 409 naming resource_id.",
    )
    def post(self, request):
        data = self.RunOpenSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        params = dict(data.validated_data)
        run_fields = {"name": params.pop("name"), "metadata": params.pop("metadata")}
        with transaction.atomic():
            thread, created = services.thread_resolve_or_create(
                agent=principal(request).agent, **params
            )
            run = services.run_start(thread=thread, **run_fields)
        body = RunSerializer(run).data
        return Response({**body, "thread_created": created}, status=status.HTTP_201_CREATED)
