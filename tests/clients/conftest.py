"""The client against a live server: alice's key, and a project-admin key of her agent."""

import pytest
from memory_console_client import MemoryConsole

from apps.tenancy.services import api_key_issue
from tests.conftest import make_actor


@pytest.fixture
def alice_live(live_server, transactional_db):
    return make_actor("acme", "alice")


@pytest.fixture
def mc(live_server, alice_live):
    with MemoryConsole(live_server.url, alice_live.key, backoff=0.01) as client:
        yield client


@pytest.fixture
def mc_admin(live_server, alice_live):
    key = api_key_issue(agent=alice_live.agent, scope="admin").secret
    with MemoryConsole(live_server.url, key, backoff=0.01) as client:
        yield client
