"""What a test of matching asks of a search answer: the hits its words or vectors found.

Messages that enter by their conversation share alone (signal `context`, conversation.py) fill
an answer up to top_k after the matches; tests of what words and vectors match leave them out.
"""


def matched(results: list[dict]) -> list[dict]:
    """Return the hits found by words or vectors, in their order."""
    return [hit for hit in results if {"lexical", "vector"} & hit["signals"].keys()]
