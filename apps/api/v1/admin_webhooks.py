"""Action webhooks over HTTP for project-admin keys: list, add, change, delete, and the
project's signing secret (read, rotate).

Writes go through the console's services (apps.actions.services), audited the same way; an
address is checked against the outbound guard when saved, as the console's form does.
"""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from apps.actions.models import ActionWebhook
from apps.actions.selectors import secret_of, webhook_get, webhook_list
from apps.actions.services import (
    action_secret_rotate,
    webhook_address_problem,
    webhook_delete,
    webhook_problems,
    webhook_save,
)
from apps.api.v1.admin_common import ADMIN_PERMISSIONS, admin_actor
from apps.api.v1.common import (
    PAGE_PARAMETERS,
    ApiView,
    StrictSerializer,
    paginate,
    paginated,
    principal,
)
from apps.core.errors import NotFound


class WebhookSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField(help_text="The action's name, as in [[NAME: argument]].")
    url = serializers.CharField()
    active = serializers.BooleanField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class SecretSerializer(serializers.Serializer):
    secret = serializers.CharField(
        allow_null=True,
        help_text="Signs each delivery (HMAC-SHA256); null until the project's first webhook.",
    )


class WebhookInSerializer(StrictSerializer):
    name = serializers.CharField(max_length=64, help_text="Upper case letters, digits and _.")
    url = serializers.CharField(max_length=2000, help_text="An http or https address.")
    active = serializers.BooleanField(default=True)

    def validate(self, attrs):
        problems = webhook_problems(
            name=attrs.get("name", self.instance.name if self.instance else ""),
            url=attrs.get("url", self.instance.url if self.instance else ""),
        )
        if "url" in attrs and "url" not in problems:
            problem = webhook_address_problem(attrs["url"])
            if problem:
                problems["url"] = problem
        problems = {field: [text] for field, text in problems.items() if field in attrs}
        if problems:
            raise serializers.ValidationError(problems)
        return attrs


class WebhookChangeSerializer(WebhookInSerializer):
    name = serializers.CharField(max_length=64, required=False)
    url = serializers.CharField(max_length=2000, required=False)
    active = serializers.BooleanField(required=False)


def _project_webhook(request, webhook_id):
    webhook = webhook_get(webhook_id=webhook_id)
    if webhook is None or webhook.project_id != principal(request).project.id:
        raise NotFound("No such webhook in this key's project.")
    return webhook


def _save(request, webhook):
    # 409 when the project has a webhook of that name, saved before or at the same moment.
    return webhook_save(webhook=webhook, actor=admin_actor(request))


class WebhookListApi(ApiView):
    permission_classes = ADMIN_PERMISSIONS

    query_parameters = PAGE_PARAMETERS

    @extend_schema(
        operation_id="admin_webhooks_list",
        responses=paginated(WebhookSerializer),
        description="The key's project's action webhooks, by name.",
    )
    def get(self, request):
        webhooks = webhook_list(project=principal(request).project)
        return paginate(request, self, webhooks, WebhookSerializer, ordering="name")

    @extend_schema(
        operation_id="admin_webhooks_create",
        request=WebhookInSerializer,
        responses={201: WebhookSerializer},
        description="POST each [[NAME: argument]] action of the project's agents to url, "
        "signed with the project's secret (made with its first webhook).",
    )
    def post(self, request):
        data = WebhookInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        webhook = ActionWebhook(project=principal(request).project, **data.validated_data)
        webhook = _save(request, webhook)
        return Response(WebhookSerializer(webhook).data, status=status.HTTP_201_CREATED)


class WebhookDetailApi(ApiView):
    permission_classes = ADMIN_PERMISSIONS

    @extend_schema(operation_id="admin_webhooks_read", responses=WebhookSerializer)
    def get(self, request, webhook_id):
        return Response(WebhookSerializer(_project_webhook(request, webhook_id)).data)

    @extend_schema(
        operation_id="admin_webhooks_update",
        request=WebhookChangeSerializer,
        responses=WebhookSerializer,
    )
    def patch(self, request, webhook_id):
        webhook = _project_webhook(request, webhook_id)
        data = WebhookChangeSerializer(webhook, data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        for field, value in data.validated_data.items():
            setattr(webhook, field, value)
        return Response(WebhookSerializer(_save(request, webhook)).data)

    @extend_schema(
        operation_id="admin_webhooks_delete",
        responses={204: None},
        description="Delete a webhook; its pending deliveries are skipped.",
    )
    def delete(self, request, webhook_id):
        webhook = _project_webhook(request, webhook_id)
        webhook_delete(webhook=webhook, actor=admin_actor(request))
        return Response(status=status.HTTP_204_NO_CONTENT)


class WebhookSecretApi(ApiView):
    permission_classes = ADMIN_PERMISSIONS

    @extend_schema(operation_id="admin_webhook_secret_read", responses=SecretSerializer)
    def get(self, request):
        secret = secret_of(project_id=principal(request).project.id)
        return Response(SecretSerializer({"secret": secret}).data)


class WebhookSecretRotateApi(ApiView):
    bodyless_methods = frozenset({"POST"})

    permission_classes = ADMIN_PERMISSIONS

    @extend_schema(
        operation_id="admin_webhook_secret_rotate",
        request=None,
        responses=SecretSerializer,
        description="Replace the project's signing secret; deliveries from now on, retries of "
        "earlier ones included, are signed with the new one.",
    )
    def post(self, request):
        project = principal(request).project
        secret = action_secret_rotate(project_id=project.id, actor=admin_actor(request))
        return Response(SecretSerializer({"secret": secret}).data)
