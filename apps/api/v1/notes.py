"""Long-term notes: list, write, read (with links and backlinks), update by version, delete."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from apps.api.v1.common import (
    INTEGER_MAX,
    PAGE_PARAMETERS,
    ApiView,
    StrictSerializer,
    actor_name,
    paginate,
    paginated,
    principal,
)
from apps.notes import selectors, services
from apps.notes.models import NoteScope
from apps.notes.paths import PATH_MAX, TAG_MAX, TITLE_MAX


class NoteSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    scope = serializers.ChoiceField(choices=NoteScope.values)
    path = serializers.CharField()
    title = serializers.CharField()
    content = serializers.CharField()
    tags = serializers.ListField(child=serializers.CharField())
    version = serializers.IntegerField()
    updated_by = serializers.CharField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class LinkSerializer(serializers.Serializer):
    path = serializers.CharField(help_text="The path the [[link]] names.")
    note_id = serializers.UUIDField(source="note.id", allow_null=True, default=None)
    missing = serializers.BooleanField(help_text="No note the caller sees has this path yet.")


class BacklinkSerializer(serializers.Serializer):
    note_id = serializers.UUIDField(source="id")
    scope = serializers.CharField()
    path = serializers.CharField()
    title = serializers.CharField()


class NoteDetailSerializer(NoteSerializer):
    links = LinkSerializer(many=True)
    backlinks = BacklinkSerializer(many=True)


def _tags_field(**kwargs):
    return serializers.ListField(
        child=serializers.CharField(max_length=TAG_MAX), max_length=32, **kwargs
    )


def _detail(note, agent) -> dict:
    body = NoteSerializer(note).data
    body["links"] = LinkSerializer(selectors.note_links(note=note), many=True).data
    backlinks = selectors.note_backlinks(note=note, viewer=agent)
    body["backlinks"] = BacklinkSerializer(backlinks, many=True).data
    return body


class NoteListApi(ApiView):
    class NoteCreateSerializer(StrictSerializer):
        scope = serializers.ChoiceField(choices=NoteScope.values, default=NoteScope.PERSONAL.value)
        path = serializers.CharField(max_length=PATH_MAX, trim_whitespace=False)
        title = serializers.CharField(
            max_length=TITLE_MAX,
            allow_blank=True,
            required=False,
            help_text="Left out: the first '# heading', else the file name.",
        )
        content = serializers.CharField(allow_blank=True, default="", trim_whitespace=False)
        tags = _tags_field(default=list)

    query_parameters = [
        OpenApiParameter("scope", str, enum=NoteScope.values),
        OpenApiParameter("tag", str, description="Only notes with this tag."),
        OpenApiParameter("path_prefix", str, description="Only paths starting with this."),
        *PAGE_PARAMETERS,
    ]

    @extend_schema(
        operation_id="notes_list",
        responses=paginated(NoteSerializer),
    )
    def get(self, request):
        params = request.query_params
        scope = params.get("scope")
        if scope is not None and scope not in NoteScope.values:
            raise serializers.ValidationError(
                {"scope": [f"Must be one of {', '.join(NoteScope.values)}."]}
            )
        for name in ("tag", "path_prefix"):
            if name in params and not params[name]:
                raise serializers.ValidationError({name: ["Must not be empty; leave it out."]})
        notes = selectors.note_list(
            agent=principal(request).agent,
            scope=scope,
            tag=params.get("tag"),
            path_prefix=params.get("path_prefix"),
        )
        return paginate(request, self, notes, NoteSerializer)

    @extend_schema(
        operation_id="notes_create",
        request=NoteCreateSerializer,
        responses={201: NoteDetailSerializer},
        description="Write a new note, personal (default) or shared with the project's agents. "
        "409 `path_taken` when the scope already has the path.",
    )
    def post(self, request):
        data = self.NoteCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        agent = principal(request).agent
        note = services.note_create(agent=agent, actor=actor_name(request), **data.validated_data)
        return Response(_detail(note, agent), status=status.HTTP_201_CREATED)


class NoteDetailApi(ApiView):
    class NotePatchSerializer(StrictSerializer):
        version = serializers.IntegerField(
            min_value=1, max_value=INTEGER_MAX, help_text="The version you read."
        )
        path = serializers.CharField(max_length=PATH_MAX, required=False, trim_whitespace=False)
        title = serializers.CharField(max_length=TITLE_MAX, required=False, allow_blank=True)
        content = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)
        tags = _tags_field(required=False)

    @extend_schema(operation_id="notes_read", responses=NoteDetailSerializer)
    def get(self, request, note_id):
        agent = principal(request).agent
        return Response(_detail(selectors.note_get(agent=agent, note_id=note_id), agent))

    @extend_schema(
        operation_id="notes_update",
        request=NotePatchSerializer,
        responses=NoteDetailSerializer,
        description="Change the note if `version` is still current; otherwise 409 "
        "`stale_version` with the current version in details.",
    )
    def patch(self, request, note_id):
        agent = principal(request).agent
        note = selectors.note_get(agent=agent, note_id=note_id)
        data = self.NotePatchSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        fields = dict(data.validated_data)
        note = services.note_update(
            note=note,
            expected_version=fields.pop("version"),
            actor=actor_name(request),
            **fields,
        )
        return Response(_detail(note, agent))

    @extend_schema(operation_id="notes_delete", responses={204: None})
    def delete(self, request, note_id):
        note = selectors.note_get(agent=principal(request).agent, note_id=note_id)
        services.note_delete(note=note, actor=actor_name(request))
        return Response(status=status.HTTP_204_NO_CONTENT)
