"""Threads: create or resolve by (channel, external_id), list, read, update, delete."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from apps.api.v1.common import (
    PAGE_PARAMETERS,
    ApiView,
    JsonObjectField,
    StrictSerializer,
    actor_name,
    paginate,
    paginated,
    principal,
)
from apps.threads import selectors, services


class ThreadSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    resource_id = serializers.CharField(source="resource.external_id", allow_null=True)
    channel = serializers.CharField()
    external_id = serializers.CharField()
    title = serializers.CharField()
    metadata = serializers.DictField()
    last_seq = serializers.IntegerField()
    message_count = serializers.IntegerField()
    token_count = serializers.IntegerField()
    last_message_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class ThreadListApi(ApiView):
    class ThreadCreateSerializer(StrictSerializer):
        resource_id = serializers.CharField(max_length=200, required=False, allow_blank=False)
        # Left out or "", an external_id is one of no channel (as the tools take it).
        channel = serializers.CharField(max_length=64, required=False, default="", allow_blank=True)
        external_id = serializers.CharField(max_length=200, required=False, default="")
        # Left out, title and metadata are not compared with an existing thread's (see
        # thread_resolve_or_create); a new thread gets "" and {}.
        title = serializers.CharField(max_length=300, required=False, allow_blank=True)
        metadata = JsonObjectField(required=False)

        def validate(self, attrs):
            if attrs["channel"] and not attrs["external_id"]:
                raise serializers.ValidationError(
                    {"external_id": ["Required with channel: the chat's id on that channel."]}
                )
            return attrs

    query_parameters = [
        OpenApiParameter("resource_id", str, description="Only threads of this resource."),
        OpenApiParameter("channel", str, description="Only threads of this channel."),
        *PAGE_PARAMETERS,
    ]

    @extend_schema(
        operation_id="threads_list",
        responses=paginated(ThreadSerializer),
    )
    def get(self, request):
        threads = selectors.thread_list(
            agent=principal(request).agent,
            resource_id=request.query_params.get("resource_id"),
            channel=request.query_params.get("channel"),
        )
        return paginate(request, self, threads, ThreadSerializer)

    @extend_schema(
        operation_id="threads_resolve_or_create",
        request=ThreadCreateSerializer,
        responses={200: ThreadSerializer, 201: ThreadSerializer},
        description="Create a thread, or return the agent's thread with this channel and "
        "external_id (200 if it existed, 201 if created). An existing thread whose resource_id, "
        "title or metadata differs from one given is a 409 naming the fields: a thread's end "
        "user never changes, and its title and metadata change through PATCH.",
    )
    def post(self, request):
        data = self.ThreadCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        thread, created = services.thread_resolve_or_create(
            agent=principal(request).agent, **data.validated_data
        )
        return Response(
            ThreadSerializer(thread).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )


class ThreadDetailApi(ApiView):
    class ThreadUpdateSerializer(StrictSerializer):
        title = serializers.CharField(max_length=300, required=False, allow_blank=True)
        metadata = JsonObjectField(required=False)

    @extend_schema(operation_id="threads_read", responses=ThreadSerializer)
    def get(self, request, thread_id):
        thread = selectors.thread_get(agent=principal(request).agent, thread_id=thread_id)
        return Response(ThreadSerializer(thread).data)

    @extend_schema(
        operation_id="threads_update", request=ThreadUpdateSerializer, responses=ThreadSerializer
    )
    def patch(self, request, thread_id):
        thread = selectors.thread_get(agent=principal(request).agent, thread_id=thread_id)
        data = self.ThreadUpdateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        thread = services.thread_update(thread=thread, **data.validated_data)
        return Response(ThreadSerializer(thread).data)

    @extend_schema(operation_id="threads_delete", responses={204: None})
    def delete(self, request, thread_id):
        thread = selectors.thread_get(agent=principal(request).agent, thread_id=thread_id)
        services.thread_delete(thread=thread, actor=actor_name(request))
        return Response(status=status.HTTP_204_NO_CONTENT)
