"""Function calling: the tools' OpenAI-style definitions, and a call that runs one.

The same registry serves MCP at /mcp, so a model's tool call behaves alike on both.
"""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from apps.agenttools.services import tool_call, tool_definitions
from apps.api.v1.common import ApiView, StrictSerializer, principal


class FunctionSerializer(serializers.Serializer):
    name = serializers.CharField()
    description = serializers.CharField()
    parameters = serializers.DictField(help_text="JSON Schema of the arguments.")


class ToolDefinitionSerializer(serializers.Serializer):
    type = serializers.ChoiceField(choices=["function"])
    function = FunctionSerializer()


class ToolListSerializer(serializers.Serializer):
    tools = ToolDefinitionSerializer(many=True)


class ToolResultSerializer(serializers.Serializer):
    name = serializers.CharField()
    result = serializers.DictField(help_text="The tool's answer, as JSON.")


class ToolListApi(ApiView):
    @extend_schema(
        operation_id="tools_list",
        responses=ToolListSerializer,
        description="Every tool as an OpenAI-style function definition: pass `tools` as the "
        "`tools` of a chat completion, and forward the model's tool calls to /tools/call.",
    )
    def get(self, request):
        return Response({"tools": tool_definitions()})


class ToolCallApi(ApiView):
    class ToolCallSerializer(StrictSerializer):
        name = serializers.CharField(max_length=100)
        arguments = serializers.JSONField(
            required=False,
            default=dict,
            help_text="A JSON object, or the JSON text of one as a model writes it.",
        )

    @extend_schema(
        operation_id="tools_call",
        request=ToolCallSerializer,
        responses=ToolResultSerializer,
        description="Run one tool for the calling agent. Bad arguments answer 400 naming the "
        "argument and what to fix; another agent's ids 404, as in the rest of the API.",
    )
    def post(self, request):
        data = self.ToolCallSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        name = data.validated_data["name"]
        result = tool_call(
            agent=principal(request).agent,
            name=name,
            arguments=data.validated_data["arguments"],
        )
        return Response({"name": name, "result": result})
