"""The effective memory config of the calling agent."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from apps.api.v1.common import ApiView, principal
from apps.episodic.extraction import extraction_state
from apps.memconfig.schema import SETTINGS
from apps.memconfig.selectors import config_effective
from apps.observations.services import memory_work_state


class ExtractionStateSerializer(serializers.Serializer):
    enabled = serializers.BooleanField()
    model = serializers.CharField()
    reason = serializers.CharField(help_text="Why extraction is off; empty when it is on.")


class MemoryWorkSerializer(serializers.Serializer):
    strategy = serializers.CharField(help_text="The agent's context_strategy.")
    path = serializers.ChoiceField(
        choices=["llm", "extractive", "off"],
        help_text="Who observes, reflects and compacts: the model, the offline extractive "
        "rules, or nobody (context_strategy none).",
    )
    model = serializers.CharField()
    reason = serializers.CharField(help_text="Why the model does not do it; empty when it does.")


class EffectiveConfigSerializer(serializers.Serializer):
    project = serializers.CharField()
    agent = serializers.CharField()
    values = serializers.DictField(help_text="Every memory setting with its effective value.")
    sources = serializers.DictField(
        child=serializers.ChoiceField(choices=["default", "project", "agent"]),
        help_text="For each setting, the level its value comes from.",
    )
    extraction = ExtractionStateSerializer(
        help_text="Whether episodic extraction runs after each turn, with which model, or why not."
    )
    memory_work = MemoryWorkSerializer(
        help_text="Whether observations, reflections and summaries are written by "
        "observer_model or by the extractive fallback, and why (consolidation follows the "
        "same model and endpoint)."
    )
    not_used_yet = serializers.ListField(
        child=serializers.CharField(),
        help_text="Settings that no code acts on yet: changing them has no effect.",
    )


class ConfigApi(ApiView):
    @extend_schema(operation_id="config_read", responses=EffectiveConfigSerializer)
    def get(self, request):
        agent = principal(request).agent
        effective = config_effective(agent=agent)
        body = {
            "project": agent.project.slug,
            "agent": agent.slug,
            "values": effective.values,
            "sources": effective.sources,
            "extraction": extraction_state(config=effective),
            "memory_work": memory_work_state(config=effective),
            "not_used_yet": [setting.key for setting in SETTINGS if not setting.in_use],
        }
        return Response(EffectiveConfigSerializer(body).data)
