"""What text the database cannot store, said so that a client knows what to fix; JSON's depth."""

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
