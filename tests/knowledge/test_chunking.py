import pytest

from apps.knowledge.chunking import chunk_sections
from apps.knowledge.extract import Section
from apps.providers.tokens import count_tokens

PROSE = " ".join(
    f"Sentence {number} says the pump on deck {number % 7} was inspected by shift {number % 3}."
    for number in range(200)
)
# Paragraphs of 20 to 80 words and sentences; every word is numbered, so overlaps are exact.
PARAGRAPHS = "\n\n".join(
    ". ".join(
        " ".join(f"item{paragraph}x{sentence}x{word}" for word in range(4 + paragraph % 9))
        for sentence in range(5)
    )
    + "."
    for paragraph in range(80)
)
# One paragraph of PDF-like lines, 12 words each, without a sentence end anywhere.
LINES = "\n".join(" ".join(f"line{line}word{word}" for word in range(12)) for line in range(200))


def _shared_words(previous: str, following: str) -> list[str]:
    """Return the longest end of previous, in whole words, that following starts with."""
    words, start_of_following = previous.split(), following.split()
    for start in range(len(words)):
        if start_of_following[: len(words) - start] == words[start:]:
            return words[start:]
    return []


def _overlap(previous: str, following: str) -> int:
    return count_tokens(" ".join(_shared_words(previous, following)))


@pytest.mark.parametrize("text", [PROSE, PARAGRAPHS, LINES], ids=["prose", "paragraphs", "lines"])
@pytest.mark.parametrize("max_tokens, overlap", [(400, 60), (120, 30), (50, 10)])
def test_chunks_stay_within_the_size_and_overlap_by_about_the_setting(text, max_tokens, overlap):
    chunks = chunk_sections([Section(text=text, page=1)], max_tokens=max_tokens, overlap=overlap)

    assert len(chunks) > 3
    for chunk in chunks:
        assert chunk.tokens == count_tokens(chunk.text) <= max_tokens
    for previous, following in zip(chunks, chunks[1:], strict=False):
        assert overlap / 2 <= _overlap(previous.text, following.text) <= overlap


def test_the_chunks_hold_the_whole_text_in_order():
    chunks = chunk_sections([Section(text=PROSE)], max_tokens=120, overlap=30)

    seen = chunks[0].text.split()
    for previous, following in zip(chunks, chunks[1:], strict=False):
        shared = len(_shared_words(previous.text, following.text))
        seen += following.text.split()[shared:]
    assert seen == PROSE.split()


def test_a_paragraph_that_fits_is_carried_whole():
    text = "\n\n".join(
        ["pump " * 40 + "end.", "The valve is red. The coolant is blue.", "tank " * 40 + "end."]
    )

    first, second = chunk_sections([Section(text=text)], max_tokens=90, overlap=20)[:2]

    assert first.text.endswith("The valve is red. The coolant is blue.")
    # Whole, and topped up with the last words before it to about the overlap.
    assert second.text.startswith("pump pump pump pump pump pump end.\n\nThe valve is red.")
    assert "The coolant is blue.\n\ntank tank" in second.text


def test_a_chunk_never_spans_two_pages_or_two_headings():
    sections = [
        Section(text="alpha " * 300, page=1),
        Section(text="bravo " * 300, page=2),
        Section(text="charlie. " * 200, heading="Ops > Restarts"),
        Section(text="delta. " * 200, heading="Ops > Backups"),
    ]

    chunks = chunk_sections(sections, max_tokens=100, overlap=20)

    expected = {
        "alpha": {"page": 1},
        "bravo": {"page": 2},
        "charlie.": {"heading": "Ops > Restarts"},
        "delta.": {"heading": "Ops > Backups"},
    }
    places = []
    for chunk in chunks:
        [word] = set(chunk.text.split())  # one section's words only
        assert chunk.metadata == expected[word]
        places.append(word)
    assert sorted(set(places), key=places.index) == list(expected)
    assert all(places.count(word) > 1 for word in expected)


def test_a_word_longer_than_the_limit_is_cut_into_chunks_within_it():
    blob = "aGVsbG8gd29ybGQ" * 500  # a base64 run without spaces
    text = f"Before the blob. {blob} After the blob."

    chunks = chunk_sections([Section(text=text)], max_tokens=50, overlap=10)

    assert all(count_tokens(c.text) <= 50 for c in chunks)
    joined = "".join(c.text.replace("Before the blob.", "").split("After")[0] for c in chunks)
    assert blob in "".join(joined.split())
    assert chunks[-1].text.endswith("After the blob.")
