"""User profile (per agent and end user) and session memory (per thread), compare-and-set."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from apps.api.v1.common import (
    INTEGER_MAX,
    ApiView,
    StrictSerializer,
    actor_name,
    principal,
)
from apps.core.text import text_problem
from apps.profiles import selectors as profile_selectors
from apps.profiles import services as profile_services
from apps.profiles.models import (
    LIST_ITEM_MAX_CHARS,
    LIST_MAX_ITEMS,
    OBJECTIVE_MAX_CHARS,
    PROFILE_MAX_CHARS,
    STATE_MAX_CHARS,
)
from apps.threads import selectors as thread_selectors


class StoredTextField(serializers.CharField):
    """Text kept exactly as sent (not trimmed); NUL and lone surrogates fail. Another JSON type
    than a string never gets here: StrictSerializer refuses it (json_type_errors)."""

    default_error_messages = {"max_length": "At most {max_length} characters; condense it."}

    def __init__(self, **kwargs):
        kwargs.setdefault("allow_blank", True)
        kwargs.setdefault("trim_whitespace", False)
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        problem = text_problem(data)
        if problem:
            raise serializers.ValidationError(f"The text {problem}.")
        return super().to_internal_value(data)


def _text_list(what: str) -> serializers.ListField:
    return serializers.ListField(
        child=StoredTextField(max_length=LIST_ITEM_MAX_CHARS),
        max_length=LIST_MAX_ITEMS,
        default=list,
        error_messages={"max_length": "At most {max_length} items; merge some."},
        help_text=f"{what}: up to {LIST_MAX_ITEMS} strings of up to {LIST_ITEM_MAX_CHARS} "
        "characters each.",
    )


def _version_field() -> serializers.IntegerField:
    return serializers.IntegerField(
        min_value=0,
        max_value=INTEGER_MAX,
        help_text="The version you read (0 when nothing was stored yet).",
    )


class ProfileSerializer(serializers.Serializer):
    resource_id = serializers.CharField(
        source="resource.external_id", help_text="The end user's external id."
    )
    content = serializers.CharField(help_text="Markdown.")
    version = serializers.IntegerField(help_text="0 while nothing was stored.")
    updated_at = serializers.DateTimeField(allow_null=True)
    updated_by = serializers.CharField()


class ProfileApi(ApiView):
    class ProfilePutSerializer(StrictSerializer):
        version = _version_field()
        content = StoredTextField(
            max_length=PROFILE_MAX_CHARS,
            help_text=f"Markdown, up to {PROFILE_MAX_CHARS} characters; replaces the profile.",
        )

    @extend_schema(
        operation_id="profile_read",
        responses=ProfileSerializer,
        description="What this agent remembers about the end user; version 0 while unwritten. "
        "404 when the project has no such end user.",
    )
    def get(self, request, resource_id):
        agent = principal(request).agent
        resource, profile = profile_selectors.profile_of_resource(
            agent=agent, resource_external_id=resource_id
        )
        return Response(_profile_body(resource, profile))

    @extend_schema(
        operation_id="profile_write",
        request=ProfilePutSerializer,
        responses=ProfileSerializer,
        description="Replace the profile if `version` is still current (the end user is created "
        "on the first write); otherwise 409 with the current version in details.",
    )
    def put(self, request, resource_id):
        data = self.ProfilePutSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        profile = profile_services.profile_put(
            agent=principal(request).agent,
            resource_external_id=resource_id,
            actor=actor_name(request),
            **data.validated_data,
        )
        return Response(ProfileSerializer(profile).data)


def _profile_body(resource, profile) -> dict:
    if profile is None:
        empty = {"content": "", "version": 0, "updated_at": None, "updated_by": ""}
        return ProfileSerializer({"resource": resource, **empty}).data
    return ProfileSerializer(profile).data


class SessionMemorySerializer(serializers.Serializer):
    thread_id = serializers.UUIDField()
    objective = serializers.CharField()
    decisions = serializers.ListField(child=serializers.CharField())
    state = serializers.CharField()
    follow_ups = serializers.ListField(child=serializers.CharField())
    version = serializers.IntegerField(help_text="0 while nothing was stored.")
    updated_at = serializers.DateTimeField(allow_null=True)
    updated_by = serializers.CharField()


class SessionMemoryApi(ApiView):
    class SessionMemoryPutSerializer(StrictSerializer):
        version = _version_field()
        objective = StoredTextField(max_length=OBJECTIVE_MAX_CHARS, default="")
        decisions = _text_list("Decisions taken in this thread")
        state = StoredTextField(max_length=STATE_MAX_CHARS, default="")
        follow_ups = _text_list("What is left to do")

    @extend_schema(operation_id="session_memory_read", responses=SessionMemorySerializer)
    def get(self, request, thread_id):
        thread = thread_selectors.thread_get(agent=principal(request).agent, thread_id=thread_id)
        memory = profile_selectors.session_memory_get(thread=thread)
        return Response(_session_memory_body(thread.id, memory))

    @extend_schema(
        operation_id="session_memory_write",
        request=SessionMemoryPutSerializer,
        responses=SessionMemorySerializer,
        description="Replace the thread's session memory if `version` is still current; "
        "otherwise 409 with the current version in details.",
    )
    def put(self, request, thread_id):
        agent = principal(request).agent
        thread_selectors.thread_get(agent=agent, thread_id=thread_id)  # 404 before any 400
        data = self.SessionMemoryPutSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        memory = profile_services.session_memory_put(
            agent=agent, thread_id=thread_id, actor=actor_name(request), **data.validated_data
        )
        return Response(SessionMemorySerializer(memory).data)


def _session_memory_body(thread_id, memory) -> dict:
    if memory is None:
        empty = {"objective": "", "decisions": [], "state": "", "follow_ups": []}
        fields = {**empty, "version": 0, "updated_at": None, "updated_by": ""}
        return SessionMemorySerializer({"thread_id": thread_id, **fields}).data
    return SessionMemorySerializer(memory).data
