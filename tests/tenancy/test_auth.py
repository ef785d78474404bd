from datetime import timedelta

import pytest
from django.core.cache import caches
from django.test import override_settings
from django.utils import timezone

from apps.tenancy.models import ApiKey
from apps.tenancy.services import api_key_revoke


def _status_and_code(client, header):
    response = client.get("/api/v1/threads", HTTP_AUTHORIZATION=header)
    return response.status_code, response.json()["error"]["code"], response


def test_it_accepts_the_agents_key(alice):
    assert alice.get("/api/v1/threads").status_code == 200


def test_it_answers_401_without_a_key(anonymous, db):
    response = anonymous.get("/api/v1/threads")

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"
    assert response["WWW-Authenticate"].startswith("Bearer")


@pytest.mark.parametrize(
    "header, says",
    [
        ("Bearer", "Bearer <api key>"),
        ("Token abc", "Bearer <api key>"),
        ("Bearer not-a-key", "Malformed API key"),
        ("Bearer mc_short_secret", "Malformed API key"),
        ("Bearer mc_abcdefghij_wrongsecret", "Unknown API key"),
    ],
)
def test_it_rejects_garbled_keys_with_401(anonymous, db, header, says):
    status, code, response = _status_and_code(anonymous, header)

    assert status == 401
    assert code == "authentication_failed"
    assert says in response.json()["error"]["message"]


def test_it_rejects_a_key_with_the_right_prefix_and_a_wrong_secret(anonymous, alice):
    prefix = alice.key.split("_")[1]

    status, _, response = _status_and_code(anonymous, f"Bearer mc_{prefix}_forged")

    assert status == 401
    assert "Unknown API key" in response.json()["error"]["message"]


def test_it_rejects_a_revoked_key(alice):
    api_key = ApiKey.objects.get(agent=alice.agent)
    api_key_revoke(api_key=api_key)

    response = alice.get("/api/v1/threads")

    assert response.status_code == 401
    assert "revoked" in response.json()["error"]["message"]


def test_it_stores_only_a_hash_of_the_key(alice):
    api_key = ApiKey.objects.get(agent=alice.agent)

    assert alice.key not in (api_key.key_hash, api_key.prefix, api_key.name)
    assert alice.key.startswith(f"mc_{api_key.prefix}_")


def test_it_records_last_use_at_most_once_a_minute(alice):
    alice.get("/api/v1/threads")
    first = ApiKey.objects.get(agent=alice.agent).last_used_at

    alice.get("/api/v1/threads")
    unchanged = ApiKey.objects.get(agent=alice.agent).last_used_at
    ApiKey.objects.filter(agent=alice.agent).update(last_used_at=first - timedelta(minutes=5))
    caches["hot"].clear()  # five minutes on, the cached key has long expired
    alice.get("/api/v1/threads")
    refreshed = ApiKey.objects.get(agent=alice.agent).last_used_at

    assert first is not None and first <= timezone.now()
    assert unchanged == first
    assert refreshed > first - timedelta(minutes=5)


@override_settings(API_MAX_BODY_BYTES=1000)
def test_it_refuses_an_oversize_body_with_413(alice):
    thread = alice.new_thread()

    response = alice.post(
        f"/api/v1/threads/{thread['id']}/messages",
        {"messages": [{"role": "user", "content": "x" * 2000}]},
    )

    assert response.status_code == 413
    assert response.json()["error"]["details"]["limit_bytes"] == 1000


def test_it_answers_malformed_json_with_400(alice):
    response = alice.client.post(
        "/api/v1/threads", data='{"title": ', content_type="application/json"
    )

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "parse_error"


def test_it_answers_a_non_json_body_with_415(alice):
    response = alice.client.post("/api/v1/threads", data="title=x", content_type="text/plain")

    assert response.status_code == 415
    assert response.json()["error"]["code"] == "unsupported_media_type"


def test_it_answers_unknown_urls_and_bad_ids_with_json_404(alice):
    for path in ("/api/v1/nothing-here", "/api/v1/threads/not-a-uuid"):
        response = alice.get(path)

        assert response.status_code == 404
        assert response.json()["error"]["code"] == "not_found"


def test_it_answers_an_unsupported_method_with_405(alice):
    response = alice.delete("/api/v1/threads")

    assert response.status_code == 405
    assert response.json()["error"]["code"] == "method_not_allowed"
