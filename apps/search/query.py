"""Turn a free-text query into the terms the full-text indexes match (any term may match)."""

import re
from dataclasses import dataclass

from apps.search.languages import STEMMED, query_language, stem_prefixes
from apps.search.languages import STOPWORDS as STOPWORDS_BY_LANGUAGE
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


@dataclass(frozen=True)
class Term:
    """A query word, matched as itself (stemmed as English by the index) or by any prefix."""

    word: str
    prefixes: tuple[str, ...] = ()


def query_terms(text: str) -> list[str]:
    """Return the distinct lower-cased content words of text, in order, at most MAX_TERMS.

    The words of a relative time phrase ("last week") are left out: the window boost
    (time_boost.py) takes them instead.
    """
    return [term.word for term in lexical_terms(text)]


def lexical_terms(text: str) -> list[Term]:
    """Return the terms the full-text indexes are asked for: query_terms() with their stems.

    A German or Spanish query (by its stop words, languages.py) drops that language's stop
    words too, and each word also matches by its stem in that language as a prefix; a query
    without stop words gets both languages' stems; an English one none.
    """
    words = _WORD.findall(without_relative_words(text).lower())
    language = query_language(words, STOPWORDS)
    dropped: frozenset[str] = STOPWORDS
    stemmed: tuple[str, ...] = ()
    if language is None:
        stemmed = STEMMED
    elif language in STOPWORDS_BY_LANGUAGE:
        dropped, stemmed = STOPWORDS | STOPWORDS_BY_LANGUAGE[language], (language,)
    kept: list[str] = []
    for word in words:
        if word not in dropped and word not in kept:
            kept.append(word)
    return [Term(word, stem_prefixes(word, stemmed)) for word in kept[:MAX_TERMS]]


def as_term(term: Term | str) -> Term:
    """Return term as a Term (a plain word has no prefixes)."""
    return term if isinstance(term, Term) else Term(term)


def fts5_match(terms: list[Term | str]) -> str:
    """Return an FTS5 MATCH expression that matches any of the terms (and their prefixes)."""
    parts = []
    for term in map(as_term, terms):
        parts.append('"' + term.word.replace('"', "") + '"')
        parts += ['"' + prefix.replace('"', "") + '"*' for prefix in term.prefixes]
    return " OR ".join(parts)
