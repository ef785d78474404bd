"""What text the database cannot store, said so that a client knows what to fix; JSON's depth."""

import re
import unicodedata

# What PostgreSQL refuses in any text or jsonb string: NUL, and UTF-16 surrogates without their
# pair (a paired \ud83d\ude00 reaches Python as one code point, so any surrogate left is lone).
# SQLite would store them, so checking in Python keeps both backends alike.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
LONE_SURROGATE = re.compile("[\ud800-\udfff]")
LONE_SURROGATE_PROBLEM = (
    "contains a lone UTF-16 surrogate (\\ud800-\\udfff), which the database cannot store; "
    "send the full pair or remove it"
)


def text_problem(text: str) -> str | None:
    """Say what in the text the database cannot store and how to fix it, or return None."""
    found = _UNSTORABLE.search(text)
    if found is None:
        return None
    if found.group() != "\x00":
        return LONE_SURROGATE_PROBLEM
    return (
        "contains the NUL character (\\u0000), which the database cannot store; remove it, or "
        "send binary data as base64"
    )


# Deeper JSON runs Python's json module out of stack (a RecursionError, so a 500) long before any
# real metadata or tool arguments need it; every JSON the API takes is held to it.
JSON_MAX_DEPTH = 100


def json_too_deep(value, limit: int = JSON_MAX_DEPTH) -> bool:
    """Say whether a parsed JSON value nests arrays and objects more than limit levels deep."""
    pending = [(value, 0)]  # a stack, not recursion, so depth cannot exhaust Python's stack
    while pending:
        node, depth = pending.pop()
        if isinstance(node, dict | list):
            if depth == limit:
                return True
            items = node.values() if isinstance(node, dict) else node
            pending.extend((item, depth + 1) for item in items)
    return False


# In a name (a note path, an end user's id, a slug): C0 and C1 control characters, and the
# characters that reorder how text is shown without being seen themselves (bidirectional
# embeddings, overrides and isolates, and the direction marks). With them two different names
# look alike, or a name shows as another ("Trojan Source", CVE-2021-42574).
_NAME_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
_NAME_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def name_normalise(name: str) -> str:
    """Return the name with full- and half-width forms made plain, in Unicode NFC.

    So a name typed precomposed (Ä) or decomposed (A + combining diaeresis) is one name, and so
    is one typed in full-width letters (Ａnn is Ann): the width mapping of RFC 8265's
    usernames, which leaves every other compatibility character (ﬁ, ², ℌ) as it is.
    """
    if name.isascii():
        return name
    plain = "".join(
        unicodedata.normalize("NFKC", char)
        if unicodedata.decomposition(char).startswith(("<wide>", "<narrow>"))
        else char
        for char in name
    )
    return unicodedata.normalize("NFC", plain)


def name_problem(name: str) -> str | None:
    """Say what a name holds that no name may, and how to fix it, or return None."""
    found = _NAME_CONTROL.search(name)
    if found:
        return f"contains the control character U+{ord(found.group()):04X}; remove it"
    found = _NAME_BIDI.search(name)
    if found:
        return (
            f"contains the bidirectional control character U+{ord(found.group()):04X}, which "
            "changes how the name is shown; remove it"
        )
    return text_problem(name)
