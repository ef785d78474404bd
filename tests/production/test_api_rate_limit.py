"""API_RATE_LIMIT: each API key gets so many requests per period, then 429 with Retry-After."""

import pytest
from django.core.cache import cache

from tests.conftest import make_actor


@pytest.fixture
def limit(settings):
    """Three requests a minute per key, counted afresh."""
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"api_key": "3/min"},
    }
    cache.clear()
    yield
    cache.clear()


def test_it_answers_429_with_retry_after_past_the_limit(limit, alice):
    answers = [alice.get("/api/v1/threads").status_code for _ in range(3)]
    refused = alice.get("/api/v1/threads")

    assert answers == [200, 200, 200]
    assert refused.status_code == 429
    assert 0 < int(refused["Retry-After"]) <= 60
    assert refused.json()["error"]["code"] == "throttled"


def test_it_counts_each_key_on_its_own(limit, alice):
    second_key = make_actor("acme", "alice")  # another key of the same agent
    for _ in range(3):
        alice.get("/api/v1/threads")

    assert alice.get("/api/v1/threads").status_code == 429
    assert second_key.get("/api/v1/threads").status_code == 200


def test_every_method_counts(limit, alice):
    thread = alice.new_thread()
    alice.append(thread["id"], {"role": "user", "content": "hi"})
    alice.get(f"/api/v1/threads/{thread['id']}")

    refused = alice.post("/api/v1/search", {"query": "hi"})
    assert refused.status_code == 429


def test_without_a_rate_nothing_is_limited(alice):
    answers = {alice.get("/api/v1/threads").status_code for _ in range(20)}

    assert answers == {200}
