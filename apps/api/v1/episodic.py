"""Memory entries: list, propose (with evidence), read, update, delete, and recall_memory."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from apps.api.v1.common import (
    PAGE_PARAMETERS,
    ApiView,
    JsonObjectField,
    MetadataField,
    StrictSerializer,
    actor_name,
    paginate,
    paginated,
    principal,
)
from apps.api.v1.search import warnings_field, with_warnings
from apps.core.errors import NotFound, Unprocessable
from apps.episodic import edits, selectors, services
from apps.episodic.approval import ORIGINS, origin_filter
from apps.episodic.models import LIVE_STATUSES, EntryKind, EntrySource, EntryStatus
from apps.memconfig.selectors import config_effective
from apps.tenancy.selectors import resource_find, resource_id_clean
from apps.tenancy.services import resource_get_or_create
from apps.threads.selectors import message_get, thread_get

# Plain values, not the enum members: a message that names the source shows what was sent.
AGENT_SOURCES = [
    EntrySource.USER_ASSERTION.value,
    EntrySource.USER_ACCEPTED_ASSISTANT_PROPOSAL.value,
    EntrySource.VERIFIED_ASSISTANT_FINDING.value,
    EntrySource.API.value,
]


class ExtractionSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    thread_id = serializers.UUIDField()
    first_seq = serializers.IntegerField()
    last_seq = serializers.IntegerField()
    model = serializers.CharField()
    prompt_version = serializers.CharField()


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
    version = serializers.IntegerField(help_text="Each edit of the text adds one (PATCH).")
    supersedes = serializers.UUIDField(
        source="supersedes_id",
        allow_null=True,
        help_text="The older entry this one replaces once approved.",
    )
    superseded_by = serializers.UUIDField(
        source="superseded_by_id",
        allow_null=True,
        help_text="The entry that replaced this one (status superseded).",
    )
    valid_from = serializers.DateTimeField(
        allow_null=True, help_text="When it was approved: from then on it is recalled."
    )
    valid_to = serializers.DateTimeField(
        allow_null=True, help_text="When it was superseded or rejected after approval."
    )
    extraction = ExtractionSerializer(
        allow_null=True, help_text="The extraction that proposed it (null for other sources)."
    )
    created_at = serializers.DateTimeField()


class EntryCreatedSerializer(EntrySerializer):
    duplicate_of = serializers.ChoiceField(
        choices=["hash", "similarity"],
        allow_null=True,
        help_text="Set when an existing entry was returned instead of storing a new one.",
    )
    similarity = serializers.FloatField(allow_null=True)


class EntryListApi(ApiView):
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
        supersedes = serializers.UUIDField(
            required=False,
            help_text="An entry of the same resource that this one updates; once this one is "
            "approved, that one becomes superseded (kept, no longer recalled).",
        )

    query_parameters = [
        OpenApiParameter("resource_id", str),
        OpenApiParameter("status", str, enum=EntryStatus.values),
        OpenApiParameter("kind", str, enum=EntryKind.values),
        OpenApiParameter(
            "origin",
            str,
            enum=list(ORIGINS),
            description="Where entries came from, as the approval rules name it "
            "(agent proposals, extraction, consolidation, memory_action markers, api).",
        ),
        *PAGE_PARAMETERS,
    ]

    @extend_schema(
        operation_id="episodic_list",
        responses=paginated(EntrySerializer),
    )
    def get(self, request):
        params = request.query_params
        for name, choices in (
            ("status", EntryStatus.values),
            ("kind", EntryKind.values),
            ("origin", list(ORIGINS)),
        ):
            if name in params and params[name] not in choices:
                raise serializers.ValidationError({name: [f"Must be one of {', '.join(choices)}."]})
        entries = selectors.entry_list(
            agent=principal(request).agent,
            resource_id=params.get("resource_id"),
            status=params.get("status"),
            kind=params.get("kind"),
        )
        if "origin" in params:
            entries = entries.filter(origin_filter(params["origin"]))
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
        resource_id = _resource_of_source(
            thread or (message.thread if message else None), params.pop("resource_id", None)
        )
        resource = (
            resource_get_or_create(project=agent.project, external_id=resource_id)
            if resource_id
            else None
        )
        if "supersedes" in params:
            params["supersedes"] = _superseded(agent, resource, params["supersedes"])
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


def _resource_of_source(thread, resource_id: str | None) -> str | None:
    """The end user an entry is about: none (a fact for the agent as a whole, even one taken
    from an end user's message), or the one asked for, which must be its source thread's end
    user when that thread has one."""
    if resource_id is None:
        return None
    held = thread.resource.external_id if thread is not None and thread.resource else None
    if held is not None and resource_id_clean(resource_id) != held:
        raise Unprocessable(
            f"resource_id: the entry's source thread belongs to end user {held!r}, not "
            f"{resource_id!r}; leave resource_id out or name that end user.",
            details={"resource_id": held},
        )
    return resource_id


def _message(agent, thread, message_id):
    if message_id is None:
        return None
    message = message_get(agent=agent, message_id=message_id)
    if message is None:
        raise Unprocessable(f"message_id {message_id} is not a message of this agent.")
    if thread is not None and message.thread_id != thread.id:
        raise Unprocessable("message_id is not a message of thread_id.")
    return message


def _superseded(agent, resource, entry_id):
    try:
        older = selectors.entry_get(agent=agent, entry_id=entry_id)
    except NotFound:
        raise Unprocessable(f"supersedes: {entry_id} is not an entry of this agent.") from None
    if older.resource_id != (resource.id if resource else None):
        raise Unprocessable(
            f"supersedes: entry {entry_id} belongs to another resource; an entry can only "
            "supersede one of its own resource."
        )
    if older.status not in LIVE_STATUSES:
        raise Unprocessable(
            f"supersedes: entry {entry_id} is {older.status}; only a pending or approved entry "
            "can be superseded."
        )
    return older


class EntryDetailApi(ApiView):
    class EntryUpdateSerializer(StrictSerializer):
        content = serializers.CharField(required=False, allow_blank=True)
        metadata = JsonObjectField(required=False)
        version = serializers.IntegerField(
            required=False,
            min_value=1,
            help_text="The version you read; a stale one answers 409 instead of overwriting.",
        )

    @extend_schema(operation_id="episodic_read", responses=EntrySerializer)
    def get(self, request, entry_id):
        entry = selectors.entry_get(agent=principal(request).agent, entry_id=entry_id)
        return Response(EntrySerializer(entry).data)

    @extend_schema(
        operation_id="episodic_update",
        request=EntryUpdateSerializer,
        responses=EntrySerializer,
        description="Change an entry's content and/or metadata (metadata is replaced whole). "
        "The new text is checked as a proposal is (length, evidence, duplicates: 409), "
        "re-embedded, and the version goes up; the previous text stays in the audit log. "
        "When approval is required, an approved entry whose text changes is pending again.",
    )
    def patch(self, request, entry_id):
        data = self.EntryUpdateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        agent = principal(request).agent
        entry = selectors.entry_get(agent=agent, entry_id=entry_id)
        entry = edits.entry_update(
            entry=entry,
            actor=actor_name(request),
            requires_approval=config_effective(agent=agent)["episodic_approval_required"],
            **data.validated_data,
        )
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


class EntryRecallApi(ApiView):
    class RecallInSerializer(StrictSerializer):
        query = serializers.CharField(max_length=2000)
        resource_id = serializers.CharField(max_length=200, required=False)
        top_k = serializers.IntegerField(min_value=1, max_value=50, default=5)
        as_of = serializers.DateTimeField(
            required=False,
            help_text="Answer as of this time (ISO 8601): the entries approved and not yet "
            "superseded or rejected then.",
        )

    @extend_schema(
        operation_id="episodic_recall",
        request=RecallInSerializer,
        responses=RecallOutSerializer,
        description="recall_memory: approved entries of the agent (and resource) ranked by "
        "full-text, vector and recency signals; with as_of, those that were approved and not "
        "yet superseded at that time.",
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
            agent=agent,
            resource=resource,
            query=params["query"],
            top_k=params["top_k"],
            as_of=params.get("as_of"),
        )
        services.entries_mark_recalled(entry_ids=[found.entry.id for found in recalled])
        results = [
            {**EntrySerializer(found.entry).data, "score": found.score, "signals": found.signals}
            for found in recalled
        ]
        return Response(with_warnings({"results": results}, warnings))
