import math
import socket
import time

import numpy as np
import pytest

from apps.providers.embeddings import HashEmbedder, OpenAIEmbedder
from apps.providers.errors import EmbeddingError


def _embedder(server, **overrides) -> OpenAIEmbedder:
    options = {
        "model": "text-embedding-3-small",
        "dimensions": 64,
        "api_key": "sk-test",
        "base_url": server.base_url,
        "timeout": 5.0,
        "max_retries": 2,
        "batch_size": 10,
    }
    return OpenAIEmbedder(**{**options, **overrides})


@pytest.mark.parametrize("count, batch_size", [(25, 10), (10, 10), (1, 10), (7, 1)])
def test_it_sends_inputs_in_batches_of_batch_size(fake_openai, count, batch_size):
    texts = [f"text number {i}" for i in range(count)]

    vectors = _embedder(fake_openai, batch_size=batch_size).embed(texts)

    bodies = fake_openai.bodies("/v1/embeddings")
    assert len(bodies) == math.ceil(count / batch_size)
    assert [text for body in bodies for text in body["input"]] == texts
    assert len(vectors) == count


def test_it_returns_unit_vectors_in_the_order_of_the_texts(fake_openai):
    texts = ["alpha release", "beta testers", "gamma rays"]

    vectors = _embedder(fake_openai, batch_size=2).embed(texts)

    assert np.allclose(vectors, HashEmbedder(64).embed(texts), atol=1e-6)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)


def test_it_asks_for_the_configured_dimensions_as_floats(fake_openai):
    _embedder(fake_openai, dimensions=256).embed(["hello"])

    body = fake_openai.bodies("/v1/embeddings")[0]
    assert body["model"] == "text-embedding-3-small"
    assert body["dimensions"] == 256
    assert body["encoding_format"] == "float"


def test_it_sends_nothing_for_no_texts(fake_openai):
    assert _embedder(fake_openai).embed([]) == []
    assert fake_openai.requests == []


def test_it_sends_a_space_for_empty_texts_which_the_api_refuses(fake_openai):
    vectors = _embedder(fake_openai).embed(["", "hello"])

    assert fake_openai.bodies("/v1/embeddings")[0]["input"] == [" ", "hello"]
    assert len(vectors) == 2


@pytest.mark.parametrize("status", [500, 502, 503, 429, 408])
def test_it_retries_transient_failures_then_succeeds(fake_openai, status):
    fake_openai.fail_next(2, status=status)

    vectors = _embedder(fake_openai, max_retries=2).embed(["hello"])

    assert len(vectors) == 1
    assert len(fake_openai.requests) == 3


def test_it_gives_up_after_max_retries(fake_openai):
    fake_openai.fail_next(10, status=503, message="Upstream overloaded")

    with pytest.raises(EmbeddingError, match="answered 503: Upstream overloaded"):
        _embedder(fake_openai, max_retries=2).embed(["hello"])

    assert len(fake_openai.requests) == 3


@pytest.mark.parametrize(
    "status, hint",
    [
        (400, "Invalid input"),
        (401, "check OPENAI_API_KEY"),
        (404, "check the model name"),
        (422, "Invalid input"),
    ],
)
def test_it_does_not_retry_other_client_errors(fake_openai, status, hint):
    fake_openai.fail_next(1, status=status, message="Invalid input")

    with pytest.raises(EmbeddingError, match=f"answered {status}: Invalid input") as caught:
        _embedder(fake_openai).embed(["hello"])

    assert hint in str(caught.value)
    assert len(fake_openai.requests) == 1


def test_it_rejects_an_answer_of_another_dimension(fake_openai):
    fake_openai.fix_dimensions(32)

    with pytest.raises(EmbeddingError) as caught:
        _embedder(fake_openai, dimensions=64).embed(["hello"])

    assert "model text-embedding-3-small returned 32 dimensions, config says 64" in str(
        caught.value
    )


def test_it_asks_again_without_dimensions_when_the_model_refuses_them(fake_openai):
    embedder = _embedder(fake_openai, model="text-embedding-ada-002", dimensions=1536)

    embedder.embed(["first"])
    embedder.embed(["second"])

    bodies = fake_openai.bodies("/v1/embeddings")
    assert ["dimensions" in body for body in bodies] == [True, False, False]


def test_it_explains_a_model_that_refuses_dimensions_and_has_another_size(fake_openai):
    embedder = _embedder(fake_openai, model="text-embedding-ada-002", dimensions=256)

    with pytest.raises(EmbeddingError, match="returned 1536 dimensions, config says 256"):
        embedder.embed(["hello"])


def test_it_gives_up_when_the_server_is_slower_than_the_timeout(fake_openai):
    fake_openai.delay(2.0)
    started = time.perf_counter()

    with pytest.raises(EmbeddingError, match=r"timed out after 0\.2s; raise OPENAI_TIMEOUT"):
        _embedder(fake_openai, timeout=0.2, max_retries=1).embed(["hello"])

    assert time.perf_counter() - started < 1.5
    assert len(fake_openai.requests) == 2


def test_it_says_when_the_endpoint_cannot_be_reached():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    embedder = OpenAIEmbedder(
        "text-embedding-3-small",
        64,
        api_key="sk-test",
        base_url=f"http://127.0.0.1:{port}/v1",
        timeout=2.0,
        max_retries=0,
        batch_size=10,
    )

    with pytest.raises(EmbeddingError, match="cannot reach .* check OPENAI_BASE_URL"):
        embedder.embed(["hello"])
