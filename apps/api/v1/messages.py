"""The message log of a thread: append a batch, read pages by seq."""

from django.conf import settings
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import exceptions, serializers, status
from rest_framework.response import Response

from apps.api.v1.common import (
    ApiView,
    MetadataField,
    StorableJsonField,
    StrictSerializer,
    parse_limit,
    principal,
    whole_number,
)
from apps.core.errors import ApplicationError
from apps.threads import selectors, services
from apps.threads.models import Kind, Role


class MessageSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    thread_id = serializers.UUIDField()
    seq = serializers.IntegerField()
    role = serializers.CharField()
    kind = serializers.CharField()
    actor = serializers.CharField()
    name = serializers.CharField()
    content = serializers.CharField()
    payload = serializers.JSONField(allow_null=True)
    metadata = serializers.DictField()
    token_count = serializers.IntegerField()
    run_id = serializers.UUIDField(allow_null=True)
    idempotency_key = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()


class AppendedMessageSerializer(MessageSerializer):
    replayed = serializers.BooleanField(
        help_text="True when the idempotency key matched a message stored earlier."
    )


class AppendedMessagesSerializer(serializers.Serializer):
    messages = AppendedMessageSerializer(many=True)


class MessagePageSerializer(serializers.Serializer):
    results = MessageSerializer(many=True)
    has_more = serializers.BooleanField()


class MessageInSerializer(StrictSerializer):
    role = serializers.ChoiceField(choices=Role.choices)
    kind = serializers.ChoiceField(choices=Kind.choices, default=Kind.MESSAGE)
    content = serializers.CharField(allow_blank=True, trim_whitespace=False, default="")
    actor = serializers.CharField(max_length=200, allow_blank=True, default="")
    name = serializers.CharField(max_length=200, allow_blank=True, default="")
    payload = StorableJsonField(required=False, allow_null=True, default=None)
    metadata = MetadataField()
    created_at = serializers.DateTimeField(required=False, default=None)
    idempotency_key = serializers.CharField(max_length=200, required=False, default=None)
    run_id = serializers.UUIDField(required=False, allow_null=True, default=None)

    def validate_content(self, value):
        limit = settings.MESSAGE_MAX_CONTENT_CHARS
        if len(value) > limit:
            raise serializers.ValidationError(
                f"Content is {len(value)} characters; the limit is {limit}. "
                "Split it or store the bulk in a knowledge base."
            )
        return value


class MessageAppendSerializer(StrictSerializer):
    messages = MessageInSerializer(many=True, allow_empty=False)

    def validate_messages(self, value):
        limit = settings.MESSAGE_BATCH_MAX
        if len(value) > limit:
            raise serializers.ValidationError(
                f"{len(value)} messages in one request; the limit is {limit}."
            )
        return value


class MessageListApi(ApiView):
    query_parameters = [
        OpenApiParameter("after_seq", int, description="Messages after this seq (oldest first)."),
        OpenApiParameter("before_seq", int, description="Messages before this seq."),
        OpenApiParameter("limit", int, description="Page size (default 50)."),
    ]

    @extend_schema(
        operation_id="messages_list",
        responses=MessagePageSerializer,
    )
    def get(self, request, thread_id):
        thread = selectors.thread_get(agent=principal(request).agent, thread_id=thread_id)
        params = request.query_params
        after_seq, before_seq = _seq_param(params, "after_seq"), _seq_param(params, "before_seq")
        if after_seq is not None and before_seq is not None and before_seq <= after_seq:
            # Both are exclusive: no message could be after the one and before the other.
            problem = (
                f"No message is after {after_seq} and before {before_seq}; "
                "before_seq must be greater than after_seq."
            )
            raise ApplicationError(
                f"after_seq, before_seq: {problem}",
                details={"after_seq": [problem], "before_seq": [problem]},
            )
        messages, has_more = selectors.message_page(
            thread=thread,
            after_seq=after_seq,
            before_seq=before_seq,
            limit=parse_limit(
                params.get("limit", str(settings.API_PAGE_SIZE)), maximum=settings.API_MAX_PAGE_SIZE
            ),
        )
        return Response(
            {"results": MessageSerializer(messages, many=True).data, "has_more": has_more}
        )

    @extend_schema(
        operation_id="messages_append",
        request=MessageAppendSerializer,
        responses={200: AppendedMessagesSerializer, 201: AppendedMessagesSerializer},
        description="Append a batch in one transaction. Each message gets the next seq; a "
        "repeated idempotency_key returns the stored message (replayed=true). 201 if anything "
        "was stored, 200 if every message was a replay.",
    )
    def post(self, request, thread_id):
        data = MessageAppendSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        appended = services.thread_append_messages(
            agent=principal(request).agent,
            thread_id=thread_id,
            items=[services.MessageInput(**item) for item in data.validated_data["messages"]],
        )
        rendered = MessageSerializer([result.message for result in appended], many=True).data
        body = [
            {**message, "replayed": result.replayed}
            for message, result in zip(rendered, appended, strict=True)
        ]
        stored_any = any(not result.replayed for result in appended)
        return Response(
            {"messages": body},
            status=status.HTTP_201_CREATED if stored_any else status.HTTP_200_OK,
        )


def _seq_param(params, name: str) -> int | None:
    raw = params.get(name)
    if raw is None:
        return None
    value = whole_number(raw)
    if value is None:
        raise exceptions.ValidationError({name: ["Must be a whole number, 0 or more."]})
    return value
