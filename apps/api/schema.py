"""The OpenAPI schema's error answers: one shared error component, the 4xx of each operation.

Every error leaves the API as {"error": {"code", "message", "details"}} (apps/core/errors.py).
drf-spectacular documents only the success of an operation; this schema class adds, to every
operation of /api/v1/, the errors it can answer, each with that component, so that generated
clients can type them:
  1. all: 400 (a parameter or field to fix; query strings and path parameters are checked for
     every operation), 401 (the API key) and 429 (its rate limit);
  2. with a path parameter: 404 (not found, or another agent's: no existence leak);
  3. with a request body: 413 (over its limit) and 415 (a content type it does not take);
  4. the few beyond those, by operation (EXTRA_ERRORS): 404 for ids in a body, 409, 422;
  5. the project-admin operations (operation ids admin_*): 403 for an agent key.

Answers defined as pydantic models (the search answer, apps/search/results.py) are documented
from the models themselves, in OpenAPI 3.0's terms (PydanticContractExtension).
"""

from drf_spectacular.contrib.pydantic import PydanticExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import ResolvedComponent
from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers


class ErrorDetailSerializer(serializers.Serializer):
    code = serializers.CharField(
        help_text="Machine-readable: invalid, parse_error, not_authenticated, not_found, "
        "conflict, payload_too_large, unsupported_media_type, unprocessable, throttled, …"
    )
    message = serializers.CharField(
        help_text="For people and models: names the field or parameter and what to fix."
    )
    details = serializers.JSONField(
        help_text="The field errors (field name → messages), or facts such as a stale write's "
        "current_version or a body's limit_bytes; {} when there are none."
    )


class ErrorSerializer(serializers.Serializer):
    error = ErrorDetailSerializer()


ERRORS = {
    400: "The request is invalid: the message names the field or parameter and what to fix.",
    401: "The API key is missing, malformed, unknown or revoked.",
    403: "The operation needs a project-admin key (create_agent --admin); this is an agent key.",
    404: "Not found for this agent (another agent's or project's objects are not found either).",
    409: "A conflict: a stale version (details.current_version), a duplicate, or a state that "
    "no longer allows the change.",
    413: "The body is over its limit (details.limit_bytes).",
    415: "The body's content type is not one this operation takes.",
    422: "Well-formed, but naming nothing usable for this call (e.g. evidence not found in the "
    "message it names, a message of another thread).",
    429: "Past the API key's rate limit (API_RATE_LIMIT); Retry-After says when to try again.",
}

# Errors beyond the generic ones (module docstring), by operation id.
EXTRA_ERRORS = {
    "admin_config_level_read": (404,),
    "admin_config_rollback": (404,),
    "admin_config_update": (404, 409),
    "admin_config_versions_list": (404,),
    "admin_webhooks_create": (409,),
    "admin_webhooks_update": (409,),
    "checkpoints_resume": (409,),
    "episodic_create": (404, 409, 422),
    "episodic_recall": (404,),
    "episodic_update": (409, 422),
    "knowledge_bases_create": (409,),
    "memory_search": (404,),
    "memory_upsert": (409,),
    "messages_append": (409, 422),
    "notes_create": (409,),
    "notes_update": (409,),
    "plan_replace": (409,),
    "profile_write": (409,),
    "runs_finish": (409, 422),
    "runs_open": (409, 422),
    "search": (404,),
    "session_memory_write": (409,),
    "snapshot_replace": (409,),
    "tools_call": (404, 409, 422),
}


class ApiAutoSchema(AutoSchema):
    def get_override_parameters(self):
        """A GET's query parameters are the ones its view takes (ApiView.query_parameters)."""
        parameters = super().get_override_parameters()
        if self.method == "GET":
            parameters = [*parameters, *getattr(self.view, "query_parameters", [])]
        return parameters

    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        if direction != "response" or not self.path.startswith("/api/v1/"):
            return responses
        for status in sorted(self.error_statuses()):
            error = OpenApiResponse(response=ErrorSerializer, description=ERRORS[status])
            responses.setdefault(str(status), self._get_response_for_code(error, str(status)))
        return responses

    def error_statuses(self) -> set[int]:
        """Return the 4xx statuses this operation can answer."""
        statuses = {400, 401, 429}
        if "{" in self.path:
            statuses.add(404)
        if self.method in ("POST", "PUT", "PATCH") and self.get_request_serializer() is not None:
            statuses |= {413, 415}
        statuses.update(EXTRA_ERRORS.get(self.get_operation_id(), ()))
        if self.get_operation_id().startswith("admin_"):
            statuses.add(403)
        return statuses


class PydanticContractExtension(PydanticExtension):
    """Document a pydantic model as drf-spectacular's own extension does, in OpenAPI 3.0's terms.

    pydantic writes JSON Schema 2020-12: a nullable field is `anyOf: [X, {"type": "null"}]`,
    a one-value Literal is `const`, and every model and field has a `title`. OpenAPI 3.0 (the
    schema's version) has `nullable` and `enum` instead, and the serializers' components carry
    no titles, so each node is rewritten that way.
    """

    priority = 1

    def map_serializer(self, auto_schema, direction):
        from pydantic.json_schema import model_json_schema

        schema = model_json_schema(
            self.target, ref_template="#/components/schemas/{model}", mode="serialization"
        )
        for name, sub_schema in schema.pop("$defs", {}).items():
            component = ResolvedComponent(
                name=name,
                type=ResolvedComponent.SCHEMA,
                object=name,
                schema=_openapi_30(sub_schema),
            )
            auto_schema.registry.register_on_missing(component)
        return _openapi_30(schema)


def _openapi_30(node):
    """Return a JSON Schema node of pydantic's as OpenAPI 3.0 writes it (see the class above)."""
    if isinstance(node, list):
        return [_openapi_30(item) for item in node]
    if not isinstance(node, dict):
        return node
    node = {
        # The keys of "properties" are field names (one may be "title"); elsewhere a title goes.
        key: {name: _openapi_30(item) for name, item in value.items()}
        if key == "properties"
        else _openapi_30(value)
        for key, value in node.items()
        if key != "title"
    }
    if "const" in node:
        node["enum"] = [node.pop("const")]
    options = node.get("anyOf", [])
    if len(options) == 2 and {"type": "null"} in options:
        del node["anyOf"]
        [kept] = [option for option in options if option != {"type": "null"}]
        # A $ref takes no siblings in OpenAPI 3.0: wrapped in allOf, it may be nullable.
        node.update({"allOf": [kept]} if "$ref" in kept else kept)
        node["nullable"] = True
    return node
