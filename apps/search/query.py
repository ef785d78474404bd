"""Turn a free-text query into the terms the full-text indexes match (any term may match)."""

import re

from apps.search.temporal import without_relative_words

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
# Words so common that matching them says nothing about relevance: PostgreSQL's `english`
# stop words (which its index leaves out, so a query word among them would match nothing there
# while SQLite's FTS5, which indexes every word, matched it), plus "could" and "would". Dropped
# from every query on both backends, so a query's terms are the same on both.
_STOPWORD_TEXT = """a about above after again against all am an and any are as at be because been
before being below between both but by can could did do does doing don down during each few for
from further had has have having he her here hers herself him himself his how i if in into is it
its itself just me more most my myself no nor not now of off on once only or other our ours
ourselves out over own s same she should so some such t than that the their theirs them
themselves then there these they this those through to too under until up very was we were what
when where which while who whom why will with would you your yours yourself yourselves"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
MAX_TERMS = 32


def query_terms(text: str) -> list[str]:
    """Return the distinct lower-cased content words of text, in order, at most MAX_TERMS.

    The words of a relative time phrase ("last week") are left out: the window boost
    (time_boost.py) takes them instead.
    """
    terms: list[str] = []
    for word in _WORD.findall(without_relative_words(text).lower()):
        if word not in STOPWORDS and word not in terms:
            terms.append(word)
    return terms[:MAX_TERMS]


def fts5_match(terms: list[str]) -> str:
    """Return an FTS5 MATCH expression that matches any of the terms."""
    return " OR ".join('"' + term.replace('"', "") + '"' for term in terms)
