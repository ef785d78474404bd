"""A thread's actions: the `[[NAME: argument]]` tokens of its assistant messages, oldest first."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import exceptions, serializers

from apps.actions.models import Delivery
from apps.actions.selectors import action_list
from apps.actions.services import NAME
from apps.api.v1.common import PAGE_PARAMETERS, ApiView, paginate, paginated, principal
from apps.threads import selectors as thread_selectors


class ActionSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    thread_id = serializers.UUIDField()
    message_id = serializers.UUIDField()
    position = serializers.IntegerField(help_text="Which token of the message, from 0.")
    name = serializers.CharField()
    argument = serializers.CharField()
    delivery = serializers.ChoiceField(
        choices=Delivery.choices, help_text="none: no webhook is configured for the name."
    )
    attempts = serializers.IntegerField()
    response_status = serializers.IntegerField(allow_null=True)
    error = serializers.CharField()
    delivered_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()


class ActionListApi(ApiView):
    query_parameters = [
        OpenApiParameter("name", str, description="Only actions of this name."),
        *PAGE_PARAMETERS,
    ]

    @extend_schema(
        operation_id="actions_list",
        responses=paginated(ActionSerializer),
    )
    def get(self, request, thread_id):
        thread = thread_selectors.thread_get(agent=principal(request).agent, thread_id=thread_id)
        name = request.query_params.get("name")
        if name is not None and not NAME.match(name):
            raise exceptions.ValidationError(
                {"name": ["An action's name: upper case letters, digits and _, e.g. TRIGGER."]}
            )
        events = action_list(thread=thread, name=name)
        return paginate(request, self, events, ActionSerializer, ordering="id")
