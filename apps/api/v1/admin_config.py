"""Memory settings over HTTP for project-admin keys: read and change a level, its history,
roll back.

The changes go through the console's service (apps.memconfig.services.config_update): the same
validation, the same version check (409 on a stale version), the same audit record. Agent keys
keep GET /config (their effective settings) and get 403 on everything here.
"""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from apps.api.v1 import config
from apps.api.v1.admin_common import (
    ADMIN_PERMISSIONS,
    LEVELS,
    Level,
    LevelSerializer,
    admin_actor,
    level_of,
)
from apps.api.v1.common import (
    INTEGER_MAX,
    PAGE_PARAMETERS,
    ApiView,
    StrictSerializer,
    json_type_errors,
    paginate,
    paginated,
)
from apps.core.errors import ApplicationError, Conflict
from apps.memconfig.schema import BY_KEY
from apps.memconfig.selectors import config_level_get, config_level_versions
from apps.memconfig.services import config_rollback, config_update
from apps.tenancy.auth import IsAgent

LEVEL_PARAMETERS = [
    OpenApiParameter("level", str, enum=LEVELS, required=True, description="project or agent."),
    OpenApiParameter(
        "agent", str, description="With level=agent: the agent's slug (default: the key's own)."
    ),
]


class ConfigLevelSerializer(serializers.Serializer):
    level = serializers.ChoiceField(choices=LEVELS)
    project = serializers.CharField()
    agent = serializers.CharField(allow_null=True, help_text="null at the project level.")
    version = serializers.IntegerField(
        help_text="Send it back as `version` with a change: a change made since answers 409."
    )
    values = serializers.DictField(
        help_text="The settings overridden at this level; the others are inherited."
    )


class ConfigVersionSerializer(serializers.Serializer):
    version = serializers.IntegerField()
    changed_by = serializers.CharField()
    changed_at = serializers.DateTimeField()
    before = serializers.DictField()
    after = serializers.DictField()
    note = serializers.CharField()


def _level_body(level: Level) -> dict:
    row = config_level_get(project=level.project, agent=level.agent)
    return {
        "level": level.name,
        "project": level.project.slug,
        "agent": level.agent.slug if level.agent else None,
        "version": row.version if row else 0,
        "values": row.values if row else {},
    }


def _query_level(request) -> Level:
    params = LevelSerializer(data=request.query_params)
    params.is_valid(raise_exception=True)
    return level_of(request, params.validated_data)


class ConfigApi(config.ConfigApi):
    """GET: the caller's effective settings (any key); PATCH: change a level (admin keys)."""

    class ConfigChangeSerializer(StrictSerializer, LevelSerializer):
        version = serializers.IntegerField(
            min_value=0,
            max_value=INTEGER_MAX,
            help_text="The level's version you read (GET /config/level); 409 if it moved on.",
        )
        values = serializers.DictField(
            allow_empty=False,
            help_text="Settings to change: key → value, or null to inherit again.",
        )
        note = serializers.CharField(
            max_length=300, required=False, default="", allow_blank=True, help_text="Why."
        )

    def get_permissions(self):
        if self.request is not None and self.request.method == "PATCH":
            return [permission() for permission in ADMIN_PERMISSIONS]
        return [IsAgent()]

    @extend_schema(
        operation_id="admin_config_update",
        request=ConfigChangeSerializer,
        responses=ConfigLevelSerializer,
        description="Change the memory settings of the key's project, or of one of its agents "
        "(project-admin keys only). Validated and audited as in the console.",
    )
    def patch(self, request):
        data = self.ConfigChangeSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        _refuse_other_json_types(data.validated_data["values"])
        level = level_of(request, data.validated_data)
        try:
            config_update(
                changes=data.validated_data["values"],
                changed_by=admin_actor(request),
                project=None if level.agent else level.project,
                agent=level.agent,
                expected_version=data.validated_data["version"],
                note=data.validated_data["note"],
            )
        except Conflict:
            raise
        except ApplicationError as exc:
            # The service names the setting; the body holds it under `values`.
            raise ApplicationError(
                f"values.{exc.message}", details={"values": exc.details}
            ) from None
        return Response(ConfigLevelSerializer(_level_body(level)).data)


class ConfigLevelApi(ApiView):
    permission_classes = ADMIN_PERMISSIONS

    query_parameters = LEVEL_PARAMETERS

    @extend_schema(
        operation_id="admin_config_level_read",
        responses=ConfigLevelSerializer,
        description="The overrides and version of the key's project, or one of its agents.",
    )
    def get(self, request):
        return Response(ConfigLevelSerializer(_level_body(_query_level(request))).data)


class ConfigVersionListApi(ApiView):
    permission_classes = ADMIN_PERMISSIONS

    query_parameters = [
        *LEVEL_PARAMETERS,
        *PAGE_PARAMETERS,
    ]

    @extend_schema(
        operation_id="admin_config_versions_list",
        responses=paginated(ConfigVersionSerializer),
        description="Each change of a level, newest first, with who, when, before and after.",
    )
    def get(self, request):
        level = _query_level(request)
        versions = config_level_versions(project=level.project, agent=level.agent)
        return paginate(request, self, versions, ConfigVersionSerializer)


class ConfigRollbackApi(ApiView):
    permission_classes = ADMIN_PERMISSIONS

    class RollbackSerializer(StrictSerializer, LevelSerializer):
        to_version = serializers.IntegerField(
            min_value=0,
            max_value=INTEGER_MAX,
            help_text="Restore the values the level had at this version (0: no overrides).",
        )

    @extend_schema(
        operation_id="admin_config_rollback",
        request=RollbackSerializer,
        responses=ConfigLevelSerializer,
        description="Restore a level's values of an earlier version, saved as a new version.",
    )
    def post(self, request):
        data = self.RollbackSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        level = level_of(request, data.validated_data)
        to_version = data.validated_data["to_version"]
        row = config_level_get(project=level.project, agent=level.agent)
        known = row is not None and row.versions.filter(version=to_version).exists()
        if to_version != 0 and not known:
            message = f"This level has no version {to_version}; see GET /config/versions."
            raise ApplicationError(f"to_version: {message}", details={"to_version": [message]})
        if row is not None:
            config_rollback(config=row, to_version=to_version, changed_by=admin_actor(request))
        return Response(ConfigLevelSerializer(_level_body(level)).data)


# The JSON type each kind of setting takes: the API takes a value as it is, where the console's
# form and the command line send text ("20", "yes") that the settings read as their types.
_FIELD_OF_TYPE = {
    bool: serializers.BooleanField(),
    int: serializers.IntegerField(),
    float: serializers.FloatField(),
    str: serializers.CharField(),
}


def _refuse_other_json_types(values: dict) -> None:
    wrong = {
        key: errors
        for key, value in values.items()
        if (setting := BY_KEY.get(key)) is not None
        and (errors := json_type_errors(_FIELD_OF_TYPE[setting.type], value))
    }
    if wrong:
        raise serializers.ValidationError({"values": wrong})
