"""Memory entries: list, propose (with evidence), read, delete, and recall_memory."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.api.v1.common import (
    MetadataField,
    StrictSerializer,
    actor_name,
    paginate,
    paginated,
    principal,
)
from apps.api.v1.search import warnings_field, with_warnings
from apps.core.errors import NotFound, Unprocessable
from apps.episodic import selectors, services
from apps.episodic.models import EntryKind, EntrySource, EntryStatus
from apps.tenancy.selectors import resource_find
from apps.tenancy.services import resource_get_or_create
from apps.threads.selectors import message_get, thread_get

# Plain values, not the enum members: a message that names the source shows what was sent.
AGENT_SOURCES = [
    EntrySource.USER_ASSERTION.value,
    EntrySource.USER_ACCEPTED_ASSISTANT_PROPOSAL.value,
    EntrySource.VERIFIED_ASSISTANT_FINDING.value,
    EntrySource.API.value,
]


class EntrySerializer(serializers.Serializer):
    id = serializers.UUIDField()
    resource_id = serializers.CharField(source="resource.external_id", allow_null=True)
    kind = serializers.CharField()
    content = serializers.CharField()
    source = serializers.CharField()
    evidence = serializers.CharField()
    thread_id = serializers.UUIDField(allow_null=True)
    message_id = serializers.UUIDField(allow_null=True)
    status = serializers.CharField()
    status_changed_by = serializers.CharField()
    status_changed_at = serializers.DateTimeField(allow_null=True)
    metadata = serializers.DictField()
    recall_count = serializers.IntegerField()
    last_recalled_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()


class EntryCreatedSerializer(EntrySerializer):
    duplicate_of = serializers.ChoiceField(
        choices=["hash", "similarity"],
        allow_null=True,
        help_text="Set when an existing entry was returned instead of storing a new one.",
    )
    similarity = serializers.FloatField(allow_null=True)


class EntryListApi(APIView):
    class EntryCreateSerializer(StrictSerializer):
        content = serializers.CharField()
        resource_id = serializers.CharField(max_length=200, required=False)
        kind = serializers.ChoiceField(
            choices=[EntryKind.EPISODIC.value, EntryKind.FACT.value],
            default=EntryKind.EPISODIC.value,
        )
        source = serializers.ChoiceField(choices=AGENT_SOURCES, default=EntrySource.API.value)
        evidence = serializers.CharField(allow_blank=True, default="", trim_whitespace=False)
        thread_id = serializers.UUIDField(required=False)
        message_id = serializers.UUIDField(required=False)
        metadata = MetadataField()

    @extend_schema(
        operation_id="episodic_list",
        parameters=[
            OpenApiParameter("resource_id", str),
            OpenApiParameter("status", str, enum=EntryStatus.values),
            OpenApiParameter("kind", str, enum=EntryKind.values),
            OpenApiParameter("limit", int),
            OpenApiParameter("cursor", str),
        ],
        responses=paginated(EntrySerializer),
    )
    def get(self, request):
        params = request.query_params
        for name, choices in (("status", EntryStatus.values), ("kind", EntryKind.values)):
            if name in params and params[name] not in choices:
                raise serializers.ValidationError({name: [f"Must be one of {', '.join(choices)}."]})
        entries = selectors.entry_list(
            agent=principal(request).agent,
            resource_id=params.get("resource_id"),
            status=params.get("status"),
            kind=params.get("kind"),
        )
        return paginate(request, self, entries, EntrySerializer)

    @extend_schema(
        operation_id="episodic_create",
        request=EntryCreateSerializer,
        responses={201: EntryCreatedSerializer, 200: EntryCreatedSerializer},
        description="Propose an entry. It starts pending unless config auto-approves. Evidence "
        "of a transcript source must occur verbatim in the named message (else 422). An exact "
        "or near duplicate (dedupe threshold) in the same scope returns the existing entry (200).",
    )
    def post(self, request):
        data = self.EntryCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        params = dict(data.validated_data)
        agent = principal(request).agent
        thread = (
            thread_get(agent=agent, thread_id=params.pop("thread_id"))
            if "thread_id" in params
            else None
        )
        message = _message(agent, thread, params.pop("message_id", None))
        resource_id = params.pop("resource_id", None)
        resource = (
            resource_get_or_create(project=agent.project, external_id=resource_id)
            if resource_id
            else None
        )
        result = services.entry_create(
            agent=agent,
            resource=resource,
            thread=thread,
            message=message,
            actor=actor_name(request),
            **params,
        )
        body = EntrySerializer(result.entry).data
        body.update(duplicate_of=result.duplicate_of, similarity=result.similarity)
        return Response(
            body, status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK
        )


def _message(agent, thread, message_id):
    if message_id is None:
        return None
    message = message_get(agent=agent, message_id=message_id)
    if message is None:
        raise Unprocessable(f"message_id {message_id} is not a message of this agent.")
    if thread is not None and message.thread_id != thread.id:
        raise Unprocessable("message_id is not a message of thread_id.")
    return message


class EntryDetailApi(APIView):
    @extend_schema(operation_id="episodic_read", responses=EntrySerializer)
    def get(self, request, entry_id):
        entry = selectors.entry_get(agent=principal(request).agent, entry_id=entry_id)
        return Response(EntrySerializer(entry).data)

    @extend_schema(operation_id="episodic_delete", responses={204: None})
    def delete(self, request, entry_id):
        entry = selectors.entry_get(agent=principal(request).agent, entry_id=entry_id)
        services.entry_delete(entry=entry, actor=actor_name(request))
        return Response(status=status.HTTP_204_NO_CONTENT)


class RecallSerializer(EntrySerializer):
    score = serializers.FloatField()
    signals = serializers.DictField()


class RecallOutSerializer(serializers.Serializer):
    results = RecallSerializer(many=True)
    warnings = warnings_field()


class EntryRecallApi(APIView):
    class RecallInSerializer(StrictSerializer):
        query = serializers.CharField(max_length=2000)
        resource_id = serializers.CharField(max_length=200, required=False)
        top_k = serializers.IntegerField(min_value=1, max_value=50, default=5)

    @extend_schema(
        operation_id="episodic_recall",
        request=RecallInSerializer,
        responses=RecallOutSerializer,
        description="recall_memory: approved entries of the agent (and resource) ranked by "
        "full-text, vector and recency signals.",
    )
    def post(self, request):
        data = self.RecallInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        params = data.validated_data
        agent = principal(request).agent
        resource = None
        if "resource_id" in params:
            resource = resource_find(project=agent.project, external_id=params["resource_id"])
            if resource is None:
                raise NotFound(f"No resource {params['resource_id']!r} in this project.")
        recalled, warnings = selectors.entry_recall(
            agent=agent, resource=resource, query=params["query"], top_k=params["top_k"]
        )
        services.entries_mark_recalled(entry_ids=[found.entry.id for found in recalled])
        results = [
            {**EntrySerializer(found.entry).data, "score": found.score, "signals": found.signals}
            for found in recalled
        ]
        return Response(with_warnings({"results": results}, warnings))
