"""OpenAPI description of the API-key authentication (loaded by TenancyConfig.ready)."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "apps.tenancy.auth.ApiKeyAuthentication"
    name = "agentKey"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "An agent's API key, or a project-admin key (create_agent --admin) for "
            "the admin_* operations: `Authorization: Bearer mc_<prefix>_<secret>`.",
        }
