import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from apps.providers import embeddings
from apps.providers.embeddings import HashEmbedder
from apps.providers.errors import EmbeddingError

ROOT = Path(__file__).resolve().parents[2]


def _cosine(embedder, first, second):
    a, b = np.asarray(embedder.embed([first, second]))
    return float(a @ b)


def test_it_returns_one_unit_vector_of_the_configured_size_per_text():
    vectors = HashEmbedder(64).embed(["deploy the api", "a cat on a mat", "x"])

    assert [len(vector) for vector in vectors] == [64, 64, 64]
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)


def test_it_names_its_model_builtin_hash():
    assert HashEmbedder(8).model == "builtin-hash"


def test_it_embeds_an_empty_list_as_an_empty_list():
    assert HashEmbedder(8).embed([]) == []


@pytest.mark.parametrize(
    "query, similar, unrelated",
    [
        ("deploy the API to production", "we deployed the api into production", "my cat eats fish"),
        ("user prefers dark mode", "the user's preference is dark mode", "invoice total is 42"),
        ("database migration failed", "the migration of the database failed", "sunny in Paris"),
        ("deploys", "deploying", "salmon"),
        ("kubernetes cluster", "kubernets clusters", "holiday photos"),
    ],
)
def test_it_places_similar_texts_nearer_than_unrelated_ones(query, similar, unrelated):
    embedder = HashEmbedder(256)

    assert _cosine(embedder, query, similar) > _cosine(embedder, query, unrelated) + 0.2


@pytest.mark.parametrize("form", ["deploys", "deployed", "deploying"])
def test_it_gives_word_forms_a_shared_feature(form):
    assert _cosine(HashEmbedder(256), "deploy", form) > 0.5


def test_it_is_deterministic_across_instances():
    texts = ["remember the milk", "Alice works at ACME"]

    assert HashEmbedder(32).embed(texts) == HashEmbedder(32).embed(texts)


def test_it_gives_the_same_vectors_in_another_process_with_another_hash_seed():
    code = "from apps.providers.embeddings import HashEmbedder as H; print(H(16).embed(['x y'])[0])"
    env = {**os.environ, "PYTHONHASHSEED": "12345"}

    output = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    ).stdout

    assert np.allclose(json.loads(output), HashEmbedder(16).embed(["x y"])[0])


@pytest.mark.parametrize("text", ["", "   ", "!!! ???", "—"])
def test_it_embeds_text_without_words_as_one_fixed_unit_vector(text):
    embedder = HashEmbedder(32)
    vector = np.asarray(embedder.embed([text])[0])

    assert np.isclose(np.linalg.norm(vector), 1.0)
    assert embedder.embed([text]) == embedder.embed([""])
    assert abs(_cosine(embedder, text, "deploy the api")) < 0.5


def test_it_embeds_a_batch_as_it_embeds_each_text_alone():
    # Its speed is the ingest benchmark's to measure (bench/ingest.py), not a timed test's.
    embeddings._feature_hash.cache_clear()
    texts = [f"note {i}: user {i * 7} prefers dark mode and short answers" for i in range(1000)]

    batch = HashEmbedder(1536).embed(texts)

    assert len(batch) == 1000 and all(len(vector) == 1536 for vector in batch)
    assert [batch[0], batch[999]] == HashEmbedder(1536).embed([texts[0], texts[999]])


def test_it_rejects_dimensions_below_one():
    with pytest.raises(EmbeddingError, match="at least 1"):
        HashEmbedder(0)
