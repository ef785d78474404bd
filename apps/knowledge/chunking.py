"""Cut sections into chunks of at most `max_tokens`, along paragraphs, then sentences, then words.

A chunk never spans two sections, so its heading and page are exact. Consecutive chunks of one
section share about `overlap` tokens (the end of one starts the next), so a fact cut at a
boundary is whole in one of them.
"""

import re
from dataclasses import dataclass, field

from apps.knowledge.extract import Section
from apps.providers.tokens import count_tokens

_PARAGRAPHS = re.compile(r"\n\s*\n")
_SENTENCES = re.compile(r"(?<=[.!?])\s+")
_WORDS = re.compile(r"\S+")


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
    # Pieces leave room for the overlap, or a chunk full of one long piece would repeat nothing.
    overlap = max(0, min(overlap, max_tokens // 2))
    chunks: list[str] = []
    current: list[tuple[str, int]] = []
    size = 0
    for piece, tokens in _pieces(text, max_tokens - overlap):
        if current and size + tokens > max_tokens:
            chunks.append(_join(current))
            # The overlap gives way to the next piece, so no chunk exceeds max_tokens.
            current = _tail(current, min(overlap, max_tokens - tokens))
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
        if tokens > max_tokens:  # a run without spaces (a URL, base64): cut it in slices
            if words:
                yield " ".join(words), size
                words, size = [], 0
            yield from _slices(word, max_tokens)
            continue
        if words and size + tokens > max_tokens:
            yield " ".join(words), size
            words, size = [], 0
        words.append(word)
        size += tokens
    if words:
        yield " ".join(words), size


def _slices(word: str, max_tokens: int):
    """Yield (slice, tokens): consecutive slices of word, each the longest within max_tokens."""
    start = 0
    while start < len(word):
        # k characters count at most k tokens and a token spans at most 4 characters.
        low, high = start + 1, min(len(word), start + 4 * max_tokens)
        while low < high:
            middle = (low + high + 1) // 2
            if count_tokens(word[start:middle]) <= max_tokens:
                low = middle
            else:
                high = middle - 1
        yield word[start:low], count_tokens(word[start:low])
        start = low


def _tail(pieces: list[tuple[str, int]], budget: int) -> list[tuple[str, int]]:
    """Return the end of a chunk, about `budget` tokens, to repeat at the start of the next.

    1. Whole pieces (paragraphs) from the end, while they fit.
    2. Then the end of the piece that did not fit: its last whole sentences, or, when those
       cover less than half of the room left, its last whole words.
    """
    kept, size = [], 0
    for piece, tokens in reversed(pieces):
        if size + tokens <= budget:
            kept.insert(0, (piece, tokens))
            size += tokens
            continue
        part = _suffix(piece, budget - size)
        if part[1]:
            kept.insert(0, part)
        break
    return kept


def _suffix(piece: str, room: int) -> tuple[str, int]:
    """Return the longest end of piece within room tokens, from a sentence or word start."""
    sentences = _suffix_from([0, *(m.end() for m in _SENTENCES.finditer(piece))], piece, room)
    if sentences[1] * 2 >= room:
        return sentences
    return _suffix_from([m.start() for m in _WORDS.finditer(piece)], piece, room)


def _suffix_from(starts: list[int], piece: str, room: int) -> tuple[str, int]:
    """Return (text, tokens) from the earliest of starts whose rest of piece fits in room."""
    best, size, end = len(piece), 0, len(piece)
    for start in reversed(starts):
        # Units end at whitespace and tokens never span it, so their counts add up.
        tokens = count_tokens(piece[start:end])
        if size + tokens > room:
            break
        best, size, end = start, size + tokens, start
    return piece[best:].strip(), size


def _join(pieces: list[tuple[str, int]]) -> str:
    return "\n\n".join(piece for piece, _ in pieces)
