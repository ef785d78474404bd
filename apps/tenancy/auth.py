"""Bearer API-key authentication for the REST API."""

from dataclasses import dataclass

from rest_framework import authentication, exceptions, permissions

from apps.tenancy.models import Agent, ApiKey, Project
from apps.tenancy.selectors import KeyRejected, api_key_authenticate


@dataclass(frozen=True)
class AgentPrincipal:
    """The caller of an API request: one agent, through one of its keys."""

    api_key: ApiKey

    is_authenticated = True
    is_anonymous = False

    @property
    def agent(self) -> Agent:
        return self.api_key.agent

    @property
    def project(self) -> Project:
        return self.api_key.agent.project

    @property
    def is_admin(self) -> bool:
        return self.api_key.is_admin


class ApiKeyAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).decode("latin-1")
        if not header:
            return None
        scheme, _, key = header.partition(" ")
        if scheme.lower() != "bearer" or not key.strip():
            raise exceptions.AuthenticationFailed(
                "Authorization header must be 'Bearer <api key>'."
            )
        try:
            api_key = api_key_authenticate(key.strip())
        except KeyRejected as exc:
            raise exceptions.AuthenticationFailed(str(exc)) from None
        return AgentPrincipal(api_key), api_key

    def authenticate_header(self, request):
        return 'Bearer realm="api"'


class IsAgent(permissions.BasePermission):
    message = "Send an agent API key as 'Authorization: Bearer <api key>'."

    def has_permission(self, request, view):
        return isinstance(request.user, AgentPrincipal)


class IsProjectAdmin(permissions.BasePermission):
    """A project-admin key (create_agent --admin): agent keys get 403 on admin operations."""

    message = (
        "This operation needs a project-admin API key (manage.py create_agent --admin, or the "
        "console's API keys page); this key is an agent key."
    )

    def has_permission(self, request, view):
        return isinstance(request.user, AgentPrincipal) and request.user.is_admin
