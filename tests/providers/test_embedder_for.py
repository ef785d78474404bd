import pytest
from django.test import override_settings

from apps.providers.embeddings import HashEmbedder, OpenAIEmbedder, embedder_for
from apps.providers.errors import EmbeddingError

OFFLINE = {"OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""}


def test_it_turns_vectors_off_without_a_model():
    assert embedder_for("", 1536) is None


def test_it_uses_the_builtin_hash_embedder_offline():
    with override_settings(**OFFLINE):
        embedder = embedder_for("builtin-hash", 384)

    assert isinstance(embedder, HashEmbedder)
    assert embedder.dimensions == 384


@pytest.mark.parametrize("model", ["text-embedding-3-small", "nomic-embed-text"])
def test_it_needs_an_endpoint_for_any_other_model(model):
    with override_settings(**OFFLINE), pytest.raises(EmbeddingError) as caught:
        embedder_for(model, 1536)

    assert str(caught.value) == (
        f"embedder model {model} needs OPENAI_API_KEY "
        "(and OPENAI_BASE_URL for a non-OpenAI endpoint)"
    )


def test_it_talks_to_openai_with_only_a_key():
    with override_settings(OPENAI_API_KEY="sk-test", OPENAI_BASE_URL=""):
        embedder = embedder_for("text-embedding-3-small", 1536)

    assert isinstance(embedder, OpenAIEmbedder)
    assert embedder.base_url == "https://api.openai.com/v1"


def test_it_talks_to_a_local_endpoint_without_a_key(fake_openai, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    settings = {"OPENAI_API_KEY": "", "OPENAI_BASE_URL": fake_openai.base_url}

    with override_settings(**settings, EMBEDDING_BATCH_SIZE=2):
        vectors = embedder_for("nomic-embed-text", 768).embed(["a", "b", "c"])

    assert len(vectors) == 3
    assert len(fake_openai.bodies("/v1/embeddings")) == 2


def test_it_retries_as_often_as_the_settings_say(fake_openai):
    fake_openai.fail_next(5, status=500)
    settings = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": fake_openai.base_url}

    with override_settings(**settings, OPENAI_MAX_RETRIES=1):
        embedder = embedder_for("text-embedding-3-small", 64)
        with pytest.raises(EmbeddingError, match="answered 500"):
            embedder.embed(["hello"])

    assert len(fake_openai.requests) == 2


def test_it_uses_the_timeout_from_settings(fake_openai):
    fake_openai.delay(2.0)
    settings = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": fake_openai.base_url}

    with override_settings(**settings, OPENAI_TIMEOUT=0.2, OPENAI_MAX_RETRIES=0):
        embedder = embedder_for("text-embedding-3-small", 64)
        with pytest.raises(EmbeddingError, match="timed out after 0.2s"):
            embedder.embed(["hello"])
