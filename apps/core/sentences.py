"""Split text into sentences without breaking what only looks like an end.

A sentence ends at a line break, or at `.`, `!` or `?` (and any closing quote or bracket) that is
followed by white space and then a capital letter, a digit, a quote or an opening bracket, or by
the end of the text. Not at:
  - a dot inside a token: decimals (4.2), versions (v2.1.3), IP addresses (10.0.0.5), URLs,
    e-mail addresses and file names (nothing but white space may follow an end);
  - a known abbreviation (Mr., Dr., e.g., approx., Inc.) or a single letter (J. Smith, U.S.);
  - a dot followed by a lower-case word ("the meeting at 3 p.m. was moved").
Rules, not a model: they cover what memory text holds (chat, tool output, notes), and each has a
test (tests/core/test_sentences.py).
"""

import re

# Abbreviations that a capitalised word often follows; compared lower-cased, without their dot.
ABBREVIATIONS = frozenset(
    """mr mrs ms dr prof sr jr st mt ft vs etc e.g i.e cf approx appt dept est inc ltd co corp
    no nos vol fig figs ref refs ed eds gen col lt sgt capt gov sen rep rev jan feb mar apr jun
    jul aug sep sept oct nov dec mon tue tues wed thu thur thurs fri sat sun""".split()
)
_BOUNDARY = re.compile(r"(?<=[.!?])[\"'”’)\]]*\s+|\n+")
_NEXT_STARTS = re.compile(r"[A-Z0-9\"'“‘(\[]|[^\W\d_a-z]")  # capital, digit, quote or bracket
_LAST_WORD = re.compile(r"(\S+)$")


def sentences(text: str) -> list[str]:
    """Return the sentences of text, stripped, in order (empty ones left out)."""
    out, start = [], 0
    for boundary in _BOUNDARY.finditer(text):
        if "\n" in boundary.group() or _ends_sentence(text, boundary):
            if piece := text[start : boundary.end()].strip():
                out.append(piece)
            start = boundary.end()
    if tail := text[start:].strip():
        out.append(tail)
    return out


def _ends_sentence(text: str, boundary: re.Match) -> bool:
    following = text[boundary.end() : boundary.end() + 1]
    if following and not _NEXT_STARTS.match(following):
        return False
    before = text[: boundary.start()].rstrip("\"'”’)]")
    if not before.endswith("."):
        return True  # ! or ?
    word = _LAST_WORD.search(before[:-1])
    token = word.group(1).lower().lstrip("(\"'“‘") if word else ""
    if token in ABBREVIATIONS:
        return False
    # A single letter (an initial), or dotted letters (U.S, e.g): not an end before a capital.
    return not re.fullmatch(r"[^\W\d_](\.[^\W\d_])*", token)
