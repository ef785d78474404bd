"""The admin API's tests: a project-admin key of an actor's agent, as a helper and a fixture."""

import pytest
from rest_framework.test import APIClient

from apps.tenancy.services import api_key_issue
from tests.conftest import Actor


def admin_of(actor: Actor) -> APIClient:
    """A project-admin key of actor's agent, as a client."""
    key = api_key_issue(agent=actor.agent, scope="admin").secret
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return client


@pytest.fixture
def admin(alice) -> APIClient:
    return admin_of(alice)


@pytest.fixture
def loopback_allowed(settings):
    """Webhook addresses on loopback pass the outbound guard (no DNS in tests)."""
    settings.OUTBOUND_ALLOWED_NETWORKS = ["127.0.0.1/32"]


HOOK_URL = "http://127.0.0.1:9/hook"
