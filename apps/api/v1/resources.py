"""Forget one end user of the calling agent: DELETE /api/v1/resources/{resource_id}."""

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response

from apps.api.v1.common import ApiView, actor_name, principal
from apps.lifecycle.services import resource_forget
from apps.tenancy.selectors import resource_id_form


class ResourceApi(ApiView):
    @extend_schema(
        operation_id="resource_forget",
        # 200 with the counts, which clients rely on (a bare serializer would be documented
        # as DELETE's usual 204 without a body).
        responses={
            200: inline_serializer(
                "ResourceForgotten",
                {
                    "resource_id": serializers.CharField(help_text="The end user's external id."),
                    "deleted": serializers.DictField(
                        child=serializers.IntegerField(min_value=0),
                        help_text="Rows deleted, per kind: threads, messages, runs, entries, "
                        "profiles, session_memories, context_snapshots, observations, summaries, "
                        "search_items, vectors, … (0 when there was none); resources is 1 when no "
                        "other agent keeps anything of the end user, so their id is gone too.",
                    ),
                },
            )
        },
        description="Delete everything this agent keeps of one end user: threads with their "
        "messages, runs, plans, checkpoints, snapshots, observations and summaries; memory "
        "entries (also those taken from the end user's threads); the profile; session memory; "
        "their search index entries and vectors. Other agents' data stays. 404 when this agent "
        "keeps nothing of an end user by that id (unknown, another agent's, or forgotten).",
    )
    def delete(self, request, resource_id):
        deleted = resource_forget(
            agent=principal(request).agent,
            resource_external_id=resource_id,
            actor=actor_name(request),
        )
        # The id as stored, which resource_forget found: what PUT .../profile answers too.
        return Response({"resource_id": resource_id_form(resource_id), "deleted": deleted})
