"""The openai client's own retries, as the settings configure them for embedders and chat models.

Scripted failures carry Retry-After: 1 ms (see FakeOpenAIServer.fail_next), so retrying costs
these tests no time unless one asks for a longer wait.
"""

import time

import pytest
from django.test import override_settings

from apps.providers.embeddings import embedder_for
from apps.providers.errors import EmbeddingError
from apps.providers.llm import LLMError, chat_model_for

ASK = [{"role": "user", "content": "Who?"}]


@pytest.fixture
def endpoint(fake_openai):
    """Point the settings at the fake server, allowing two retries."""
    with override_settings(
        OPENAI_API_KEY="sk-test", OPENAI_BASE_URL=fake_openai.base_url, OPENAI_MAX_RETRIES=2
    ):
        yield fake_openai


def _embed():
    return embedder_for("text-embedding-3-small", 64).embed(["hello"])


def _chat():
    return chat_model_for("gpt-test").complete(ASK)


@pytest.mark.parametrize("status", [429, 503])
def test_it_retries_until_an_answer_comes(endpoint, status):
    endpoint.fail_next(2, status=status)

    assert len(_embed()) == 1
    assert len(endpoint.requests) == 3


@pytest.mark.parametrize(
    "status, message, says",
    [
        (429, "Rate limit reached", "answered 429: Rate limit reached; slow down"),
        (503, "Upstream overloaded", "answered 503: Upstream overloaded; the provider failed"),
    ],
)
def test_it_describes_the_last_error_once_the_retries_are_spent(endpoint, status, message, says):
    endpoint.fail_next(10, status=status, message=message)

    with pytest.raises(EmbeddingError, match=says):
        _embed()
    with pytest.raises(LLMError, match=says):
        _chat()

    assert len(endpoint.bodies("/v1/embeddings")) == 3
    assert len(endpoint.bodies("/v1/chat/completions")) == 3


@pytest.mark.parametrize("retries", [0, 1, 3])
def test_it_makes_one_attempt_plus_the_configured_retries(endpoint, retries):
    endpoint.fail_next(10, status=503)

    with override_settings(OPENAI_MAX_RETRIES=retries), pytest.raises(EmbeddingError):
        _embed()

    assert len(endpoint.requests) == 1 + retries


def test_it_waits_as_long_as_retry_after_says(endpoint):
    endpoint.fail_next(2, status=429, retry_after=0.2)
    started = time.perf_counter()

    _embed()

    # The client's own backoff would wait at least 0.375 + 0.75 s; Retry-After asks for 0.4.
    assert 0.4 <= time.perf_counter() - started < 1.0
    assert len(endpoint.requests) == 3


@pytest.mark.parametrize("status", [400, 401, 404, 422])
def test_it_does_not_retry_a_client_error(endpoint, status):
    endpoint.fail_next(1, status=status, message="Invalid input")

    with pytest.raises(LLMError, match=f"answered {status}: Invalid input"):
        _chat()

    assert len(endpoint.requests) == 1
