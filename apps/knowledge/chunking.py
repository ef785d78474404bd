"""Cut sections into chunks of about `max_tokens`, along paragraphs, then sentences, then words.

A chunk never spans two sections, so its heading and page are exact. Consecutive chunks of one
section share about `overlap` tokens, so a fact cut at a boundary is whole in one of them.
"""

import re
from dataclasses import dataclass, field

from apps.knowledge.extract import Section
from apps.providers.tokens import count_tokens

_PARAGRAPHS = re.compile(r"\n\s*\n")
_SENTENCES = re.compile(r"(?<=[.!?])\s+")


@dataclass
class ChunkDraft:
    text: str
    tokens: int
    metadata: dict = field(default_factory=dict)


def chunk_sections(sections: list[Section], *, max_tokens: int, overlap: int) -> list[ChunkDraft]:
    drafts: list[ChunkDraft] = []
    for section in sections:
        metadata = {}
        if section.page is not None:
            metadata["page"] = section.page
        if section.heading:
            metadata["heading"] = section.heading
        for text in _chunk_text(section.text, max_tokens, overlap):
            drafts.append(ChunkDraft(text=text, tokens=count_tokens(text), metadata=dict(metadata)))
    return drafts


def _chunk_text(text: str, max_tokens: int, overlap: int) -> list[str]:
    chunks: list[str] = []
    current: list[tuple[str, int]] = []
    size = 0
    for piece, tokens in _pieces(text, max_tokens):
        if current and size + tokens > max_tokens:
            chunks.append(_join(current))
            current = _tail(current, overlap)
            size = sum(t for _, t in current)
        current.append((piece, tokens))
        size += tokens
    if current:  # it always holds a piece after the last flush, so it is never only overlap
        chunks.append(_join(current))
    return [chunk for chunk in chunks if chunk.strip()]


def _pieces(text: str, max_tokens: int):
    """Yield (piece, tokens): paragraphs, split further where one exceeds max_tokens."""
    for paragraph in _PARAGRAPHS.split(text.strip()):
        paragraph = paragraph.strip()
        if not paragraph:
            continue
        tokens = count_tokens(paragraph)
        if tokens <= max_tokens:
            yield paragraph, tokens
            continue
        for sentence in _SENTENCES.split(paragraph):
            sentence_tokens = count_tokens(sentence)
            if sentence_tokens <= max_tokens:
                yield sentence, sentence_tokens
                continue
            yield from _words(sentence, max_tokens)


def _words(sentence: str, max_tokens: int):
    words, size = [], 0
    for word in sentence.split():
        tokens = count_tokens(word)
        if words and size + tokens > max_tokens:
            yield " ".join(words), size
            words, size = [], 0
        words.append(word)
        size += tokens
    if words:
        yield " ".join(words), size


def _tail(pieces: list[tuple[str, int]], overlap: int) -> list[tuple[str, int]]:
    """Return the last pieces that together stay within overlap tokens."""
    kept, size = [], 0
    for piece, tokens in reversed(pieces):
        if size + tokens > overlap:
            break
        kept.insert(0, (piece, tokens))
        size += tokens
    return kept


def _join(pieces: list[tuple[str, int]]) -> str:
    return "\n\n".join(piece for piece, _ in pieces)
