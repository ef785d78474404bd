"""The context an agent sends to its model, and the snapshots of every context given."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from apps.api.v1.common import (
    PAGE_PARAMETERS,
    ApiView,
    StrictSerializer,
    paginate,
    paginated,
    principal,
    query_values,
)
from apps.context.answer import Context, context_answer
from apps.context.assembly import context_assemble
from apps.context.snapshots import snapshot_diff, snapshot_get, snapshot_list, snapshot_replay
from apps.memconfig.selectors import config_effective
from apps.threads.selectors import thread_get

MAX_TOKENS_RANGE = (200, 2_000_000)


class ContextInSerializer(StrictSerializer):
    query = serializers.CharField(
        max_length=2000,
        required=False,
        allow_blank=True,
        help_text="What the context is for; default: the thread's latest user message.",
    )
    max_tokens = serializers.IntegerField(
        min_value=MAX_TOKENS_RANGE[0],
        max_value=MAX_TOKENS_RANGE[1],
        required=False,
        help_text="The budget; default: the agent's context_max_tokens setting.",
    )


class ContextListItemSerializer(serializers.Serializer):
    id = serializers.UUIDField(help_text="The context_id.")
    query = serializers.CharField()
    max_tokens = serializers.IntegerField()
    tokens = serializers.IntegerField()
    config_version = serializers.CharField()
    created_at = serializers.DateTimeField(source="assembled_at")


class DiffItemSerializer(serializers.Serializer):
    block = serializers.CharField()
    type = serializers.CharField()
    id = serializers.CharField()
    seq = serializers.IntegerField(allow_null=True)


class ContextDiffSerializer(serializers.Serializer):
    from_ = serializers.UUIDField()
    to = serializers.UUIDField()
    entered = DiffItemSerializer(many=True)
    left = DiffItemSerializer(many=True)
    changed = DiffItemSerializer(many=True)

    def get_fields(self):
        fields = super().get_fields()
        fields["from"] = fields.pop("from_")
        return fields


class ContextApi(ApiView):
    def _answer(self, request, thread_id, data):
        params = ContextInSerializer(data=data)
        params.is_valid(raise_exception=True)
        agent = principal(request).agent
        # The session memory comes in the thread's query: one round trip less per context.
        thread = thread_get(agent=agent, thread_id=thread_id, related=("session_memory",))
        max_tokens = params.validated_data.get("max_tokens")
        if max_tokens is None:
            max_tokens = config_effective(agent=agent)["context_max_tokens"]
        answer = context_assemble(
            agent=agent,
            thread=thread,
            query=params.validated_data.get("query"),
            max_tokens=max_tokens,
        )
        return Response(context_answer(answer))

    @extend_schema(
        operation_id="context_build",
        request=ContextInSerializer,
        responses=Context,
        description="Assemble the context to send with the next model call: the blocks in "
        "their fixed order (user_profile, session_memory, observations or summary, memory, "
        "knowledge, recall) rendered into system_prompt, and the recent messages ready for a "
        "chat call. Over max_tokens, blocks are trimmed (recall first, the recent window and "
        "the user profile last) and warnings say what was cut. Each answer is stored as a "
        "snapshot under its context_id.",
    )
    def post(self, request, thread_id):
        return self._answer(request, thread_id, request.data)

    query_parameters = [
        OpenApiParameter("query", str, description="Default: the latest user message."),
        OpenApiParameter("max_tokens", int, description="Default: context_max_tokens."),
    ]

    @extend_schema(
        operation_id="context_build_get",
        responses=Context,
        description="The same as POST, with the query and budget as query parameters.",
    )
    def get(self, request, thread_id):
        return self._answer(request, thread_id, query_values(request))


class ContextDetailApi(ApiView):
    @extend_schema(
        operation_id="context_read",
        responses=Context,
        description="A stored context re-rendered from the rows it named; items whose rows "
        "changed since are flagged `changed`, those that are gone `deleted` (and left out).",
    )
    def get(self, request, context_id):
        snapshot = snapshot_get(agent=principal(request).agent, context_id=context_id)
        return Response(context_answer(snapshot_replay(snapshot=snapshot)))


class ContextListApi(ApiView):
    query_parameters = PAGE_PARAMETERS

    @extend_schema(
        operation_id="contexts_list",
        responses=paginated(ContextListItemSerializer),
        description="The thread's contexts, newest first.",
    )
    def get(self, request, thread_id):
        thread = thread_get(agent=principal(request).agent, thread_id=thread_id)
        return paginate(request, self, snapshot_list(thread=thread), ContextListItemSerializer)


class ContextDiffApi(ApiView):
    @extend_schema(
        operation_id="contexts_diff",
        responses=ContextDiffSerializer,
        description="Which items entered, left or changed from context a to context b.",
    )
    def get(self, request, context_a, context_b):
        agent = principal(request).agent
        first = snapshot_get(agent=agent, context_id=context_a)
        second = snapshot_get(agent=agent, context_id=context_b)
        return Response(ContextDiffSerializer(snapshot_diff(first=first, second=second)).data)
