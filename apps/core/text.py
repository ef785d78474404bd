"""What text the database cannot store, said so that a client knows what to fix."""

import re

# What PostgreSQL refuses in any text or jsonb string: NUL, and UTF-16 surrogates without their
# pair (a paired \ud83d\ude00 reaches Python as one code point, so any surrogate left is lone).
# SQLite would store them, so checking in Python keeps both backends alike.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def text_problem(text: str) -> str | None:
    """Say what in the text the database cannot store and how to fix it, or return None."""
    found = _UNSTORABLE.search(text)
    if found is None:
        return None
    if found.group() == "\x00":
        what, fix = "the NUL character (\\u0000)", "remove it, or send binary data as base64"
    else:
        what, fix = "a lone UTF-16 surrogate (\\ud800-\\udfff)", "send the full pair or remove it"
    return f"contains {what}, which the database cannot store; {fix}"
