"""Consolidation without a model: merge what repeats, skip what is already an entry.

Offline there may be no embedder, so entry_create's similarity check cannot see that "My hips
feel tight after runs" repeats "My hips feel tight after runs again". Two texts repeat each
other when they name the same specifics (words with a digit or a capital: pay-1001, 78, Porto)
and the content words (rules.content_words) of the shorter are mostly in the
longer: overlap / size of the smaller set ≥ REPEAT_OVERLAP. A differing id, number or name
makes a different fact ("I weigh 78 kg" then "I weigh 75 kg" are both kept). Within a batch the
later candidate is merged into the earlier (its seq noted in repeated_at); a candidate that
repeats one of the scope's entries (any status: a rejected one must not come back) is not
stored.
"""

from dataclasses import dataclass, replace

from apps.episodic.consolidation.rules import content_words, words
from apps.episodic.models import MemoryEntry

REPEAT_OVERLAP = 0.75
# The scope's newest entries compared: enough for what one thread repeats, bounded so a scope
# of many thousands of entries does not make every batch read them all.
KNOWN_ENTRIES = 500
# Labels put before an entry's text ("The user said: …") are not part of what it says.
_LABEL_SEPARATOR = ": "


@dataclass(frozen=True)
class Words:
    content: frozenset[str]
    specifics: frozenset[str]


def words_of(text: str) -> Words:
    """Return the content words and the specifics of an entry's text (an error's label kept:
    it names the call)."""
    head, separator, rest = text.partition(_LABEL_SEPARATOR)
    body = rest if separator and not head.startswith("Error") and len(head.split()) <= 4 else text
    found = words(body)
    specifics = frozenset(
        word
        for index, word in enumerate(found)
        if any(c.isdigit() for c in word) or (index and any(c.isupper() for c in word))
    )
    return Words(frozenset(content_words(body)), specifics)


def repeats(a: Words, b: Words) -> bool:
    """Whether two texts say the same thing: the same specifics, most content words shared."""
    if not a.content or not b.content or a.specifics != b.specifics:
        return False
    return len(a.content & b.content) / min(len(a.content), len(b.content)) >= REPEAT_OVERLAP


class KnownEntries:
    """The content words of a scope's newest entries, read once per consolidation run."""

    def __init__(self, *, agent, resource):
        contents = (
            MemoryEntry.objects.filter(agent=agent, resource=resource)
            .order_by("-created_at", "-id")
            .values_list("content", flat=True)[:KNOWN_ENTRIES]
        )
        self._known = [words_of(content) for content in contents]

    def known(self, text: str) -> bool:
        found = words_of(text)
        return any(repeats(found, known) for known in self._known)

    def add(self, text: str) -> None:
        self._known.append(words_of(text))


def repeats_merged(candidates: list) -> list:
    """Return candidates with each one that repeats an earlier one merged into it."""
    merged: list = []
    sets: list[Words] = []
    for candidate in candidates:
        found = words_of(candidate.content)
        for index, earlier in enumerate(sets):
            if repeats(found, earlier):
                first = merged[index]
                merged[index] = replace(
                    first, repeated_at=(*first.repeated_at, candidate.first_seq)
                )
                break
        else:
            merged.append(candidate)
            sets.append(found)
    return merged
