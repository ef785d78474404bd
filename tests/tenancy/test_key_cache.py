"""The key, agent and project every API request reads come from the per-process hot cache."""

from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.tenancy.models import ApiKey
from apps.tenancy.services import api_key_revoke


def _key_reads(actor) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert actor.get("/api/v1/config").status_code == 200
    return sum('FROM "tenancy_apikey"' in query["sql"] for query in queries)


def test_it_reads_a_key_once_and_then_serves_it_from_the_cache(alice):
    assert _key_reads(alice) == 1

    assert _key_reads(alice) == 0


def test_a_revoked_key_is_refused_on_the_very_next_request(alice):
    assert _key_reads(alice) == 1  # now cached
    api_key_revoke(api_key=ApiKey.objects.get(agent=alice.agent))

    response = alice.get("/api/v1/config")

    assert response.status_code == 401
    assert "revoked" in response.json()["error"]["message"]


def test_renaming_the_agent_is_seen_on_the_next_request(alice):
    assert _key_reads(alice) == 1
    alice.agent.name = "Renamed"
    alice.agent.save()

    assert _key_reads(alice) == 1  # read again after the change


def test_a_cached_key_still_checks_the_presented_secret(alice):
    assert _key_reads(alice) == 1
    prefix, _, secret = alice.key.rpartition("_")
    alice.client.credentials(HTTP_AUTHORIZATION=f"Bearer {prefix}_{'x' * len(secret)}")

    response = alice.get("/api/v1/config")

    assert response.status_code == 401
