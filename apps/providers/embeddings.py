"""Turn texts into unit-length vectors: a built-in hashing embedder, or any OpenAI-compatible API.

embedder_for(model, dimensions) picks one from the memory config's embedder_model:
  ""               no embedder; search is lexical only
  "builtin-hash"   HashEmbedder, deterministic and offline
  "local:<name>"   a small in-process model, e.g. local:minilm-onnx (local_embedder.py)
  anything else    OpenAIEmbedder against OPENAI_BASE_URL (default: OpenAI itself)
"""

import hashlib
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import pairwise
from typing import Protocol

import numpy as np
import openai
from django.conf import settings

from apps.providers.api_errors import describe_api_error, server_message
from apps.providers.endpoint import endpoint_configured, endpoint_options
from apps.providers.errors import EmbeddingError

HASH_MODEL = "builtin-hash"


class Embedder(Protocol):
    model: str
    dimensions: int

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Return one L2-normalised vector per text, in the order given."""


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    """Scale each row to length 1, leaving all-zero rows as they are."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)


# --- Built-in hashing embedder ------------------------------------------------------------------

_WORDS = re.compile(r"[^\W_]+")
# fmt: off
_STOP_WORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "has", "have", "in", "is",
    "it", "its", "of", "on", "or", "that", "the", "this", "to", "was", "were", "will", "with",
})
# fmt: on
_WORD_WEIGHT = 1.0
_STOP_WORD_WEIGHT = 0.2
_BIGRAM_WEIGHT = 0.5
_TRIGRAM_WEIGHT = 0.25
# The feature a text without words gets; see HashEmbedder.
_EMPTY_FEATURE = "\x00empty"


def _stem(word: str) -> str:
    """Strip one common English suffix, so "deploys", "deployed" and "deploying" share a stem."""
    for suffix, replacement in (("ies", "y"), ("ied", "y"), ("ing", ""), ("ed", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) + len(replacement) >= 3:
            if suffix == "s" and word.endswith(("ss", "us", "is")):
                return word
            word = word[: len(word) - len(suffix)] + replacement
            if suffix in ("ing", "ed") and len(word) > 3 and word[-1] == word[-2] not in "lsz":
                word = word[:-1]  # "running" → "runn" → "run"
            break
    # Dropping a final "e" makes "create", "creates" and "created" meet at "creat".
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


@lru_cache(maxsize=1 << 17)
def _feature_hash(feature: str) -> int:
    """Return a stable 64-bit hash of a feature (Python's hash() changes between processes)."""
    return int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "little")


def _features(text: str) -> list[tuple[str, float]]:
    """Return the weighted features of a text: stemmed words, word bigrams, character trigrams."""
    words = _WORDS.findall(text.lower())
    stems = [_stem(word) for word in words]
    features = []
    for word, stem in zip(words, stems, strict=True):
        if word in _STOP_WORDS:
            features.append(("w:" + stem, _STOP_WORD_WEIGHT))
            continue
        features.append(("w:" + stem, _WORD_WEIGHT))
        padded = f"<{word}>"
        features.extend(("t:" + padded[i : i + 3], _TRIGRAM_WEIGHT) for i in range(len(word)))
    features.extend((f"b:{first} {second}", _BIGRAM_WEIGHT) for first, second in pairwise(stems))
    return features


class HashEmbedder:
    """Embed by signed feature hashing: deterministic, offline, and quick.

    A text with no words (empty, or only punctuation) gets one fixed unit vector, the hash of a
    reserved feature, rather than zeros: cosine distance to a zero vector is undefined (pgvector
    answers NaN), and a fixed vector keeps such texts together and away from real ones.
    """

    model = HASH_MODEL

    def __init__(self, dimensions: int):
        if dimensions < 1:
            raise EmbeddingError(f"embedder dimensions must be at least 1, got {dimensions}")
        self.dimensions = dimensions

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Return one L2-normalised vector per text, in the order given."""
        return self.embed_array(texts).tolist()

    def embed_array(self, texts: list[str]) -> np.ndarray:
        """Return the vectors as a float32 matrix, one row per text."""
        rows, columns, values = [], [], []
        for row, text in enumerate(texts):
            features = _features(text) or [(_EMPTY_FEATURE, 1.0)]
            for feature, weight in features:
                hashed = _feature_hash(feature)
                rows.append(row)
                columns.append(hashed % self.dimensions)
                values.append(weight if hashed >> 63 else -weight)
        matrix = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        index = (np.asarray(rows, dtype=np.intp), np.asarray(columns, dtype=np.intp))
        np.add.at(matrix, index, np.asarray(values, dtype=np.float32))
        return unit_rows(matrix)


# --- OpenAI-compatible API ----------------------------------------------------------------------


class OpenAIEmbedder:
    """Embed with an OpenAI-compatible /embeddings endpoint, in batches, checking each answer."""

    def __init__(
        self,
        model: str,
        dimensions: int,
        *,
        api_key: str,
        base_url: str,
        timeout: float,
        max_retries: int,
        batch_size: int,
    ):
        self.model = model
        self.dimensions = dimensions
        self.base_url = base_url
        self.timeout = timeout
        self.batch_size = max(1, batch_size)
        self._send_dimensions = True
        # The client retries transient failures itself (Retry-After honoured, jittered backoff).
        self._client = openai.OpenAI(
            api_key=api_key, base_url=base_url, timeout=timeout, max_retries=max_retries
        )

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Return one L2-normalised vector per text, in the order given."""
        vectors = []
        for start in range(0, len(texts), self.batch_size):
            vectors.extend(self._embed_batch(texts[start : start + self.batch_size]))
        return vectors

    def _embed_batch(self, texts: list[str]) -> list[list[float]]:
        # The API rejects empty strings; a lone space embeds as a near-neutral vector instead.
        inputs = [text if text.strip() else " " for text in texts]
        try:
            response = self._create_checking_dimensions(inputs)
        except openai.APIError as error:
            raise self._error(error) from error
        return self._vectors(response, expected=len(texts))

    def _create_checking_dimensions(self, inputs: list[str]):
        if not self._send_dimensions:
            return self._create(inputs, send_dimensions=False)
        try:
            return self._create(inputs, send_dimensions=True)
        except openai.BadRequestError as error:
            if "dimension" not in server_message(error).lower():
                raise
            # Older models (text-embedding-ada-002) refuse the parameter; their native size may
            # still match the config, which _vectors checks.
            response = self._create(inputs, send_dimensions=False)
            self._send_dimensions = False
            return response

    def _create(self, inputs: list[str], *, send_dimensions: bool) -> dict:
        extra = {"dimensions": self.dimensions} if send_dimensions else {}
        raw = self._client.embeddings.with_raw_response.create(
            model=self.model, input=inputs, encoding_format="float", **extra
        )
        # The client's typed parse builds every float as a model field, which cost more than
        # the rest of an embedding job; the JSON decoder reads the same answer ten times faster.
        try:
            return json.loads(raw.content)
        except ValueError:
            raise EmbeddingError(f"model {self.model} answered with malformed JSON") from None

    def _vectors(self, response: dict, *, expected: int) -> list[list[float]]:
        try:
            data = [item["embedding"] for item in sorted(response["data"], key=_index)]
        except (KeyError, TypeError):
            raise EmbeddingError(f"model {self.model} answered without embeddings") from None
        if len(data) != expected:
            raise EmbeddingError(
                f"model {self.model} returned {len(data)} embeddings for {expected} texts"
            )
        sizes = {len(embedding) for embedding in data}
        if sizes != {self.dimensions}:
            size = min(sizes - {self.dimensions})
            raise EmbeddingError(
                f"model {self.model} returned {size} dimensions, config says {self.dimensions}; "
                f"set embedder_dimensions to {size} or pick another model"
            )
        matrix = np.asarray(data, dtype=np.float32)
        return unit_rows(matrix).tolist()

    def _error(self, error: openai.APIError) -> EmbeddingError:
        return EmbeddingError(
            describe_api_error(
                error, model=self.model, base_url=self.base_url, timeout=self.timeout
            )
        )


def _index(item: dict) -> int:
    return item["index"]


def embedder_for(model: str, dimensions: int) -> Embedder | None:
    """Return the embedder for a configured model name, or None when vectors are off.

    Inside embeddings_precomputed() for the same model, it answers the texts embedded there
    from memory.
    """
    remembered = _precomputed.get()
    if model and remembered is not None and remembered.serves(model, dimensions):
        return _Remembering(remembered)
    return _embedder_for(model, dimensions)


def _embedder_for(model: str, dimensions: int) -> Embedder | None:
    if not model:
        return None
    if model == HASH_MODEL:
        return HashEmbedder(dimensions)
    if model.startswith("local:"):
        # Imported on use: its models load onnxruntime, or PyTorch, only when chosen.
        from apps.providers.local_embedder import LocalEmbedder

        return LocalEmbedder(model.removeprefix("local:"), dimensions)
    if not endpoint_configured():
        raise EmbeddingError(
            f"embedder model {model} needs OPENAI_API_KEY "
            "(and OPENAI_BASE_URL for a non-OpenAI endpoint)"
        )
    return OpenAIEmbedder(
        model, dimensions, batch_size=settings.EMBEDDING_BATCH_SIZE, **endpoint_options()
    )


@dataclass
class _Precomputed:
    model: str
    dimensions: int
    vectors: dict[str, list[float]] = field(default_factory=dict)
    failure: EmbeddingError | None = None  # the embedder failed: fail again at once

    def serves(self, model: str, dimensions: int) -> bool:
        return (self.model, self.dimensions) == (model, dimensions)


_precomputed: ContextVar[_Precomputed | None] = ContextVar("embeddings_precomputed", default=None)


@contextmanager
def embeddings_precomputed(model: str, dimensions: int, texts: list[str]) -> Iterator[None]:
    """Embed texts now, and inside the block answer embed() calls for them from memory.

    For work that embeds inside a transaction (a dedupe check before an insert): embedding
    first keeps the transaction, and on SQLite the database's one write lock, as short as
    the writes. If the embedder fails here, calls inside the block fail at once the same way
    instead of waiting on it again with the lock held.
    """
    remembered = _Precomputed(model, dimensions)
    embedder = _embedder_for(model, dimensions)
    unique = list(dict.fromkeys(texts))
    if embedder is not None and unique:
        try:
            remembered.vectors = dict(zip(unique, embedder.embed(unique), strict=True))
        except EmbeddingError as error:
            remembered.failure = error
    token = _precomputed.set(remembered)
    try:
        yield
    finally:
        _precomputed.reset(token)


class _Remembering:
    """An embedder answering the texts of embeddings_precomputed() from memory.

    The real embedder is made only for a text not embedded ahead: making one is not free (an
    API client loads the system's certificates, ~50 ms).
    """

    def __init__(self, remembered: _Precomputed):
        self.model, self.dimensions = remembered.model, remembered.dimensions
        self._remembered = remembered

    def embed(self, texts: list[str]) -> list[list[float]]:
        remembered = self._remembered
        missing = [text for text in dict.fromkeys(texts) if text not in remembered.vectors]
        if missing:
            if remembered.failure is not None:
                raise remembered.failure
            embedder = _embedder_for(self.model, self.dimensions)
            remembered.vectors.update(zip(missing, embedder.embed(missing), strict=True))
        return [remembered.vectors[text] for text in texts]
