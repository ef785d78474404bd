"""Token counting: the one function every budget and counter uses.

No tokenizer ships offline for every model, so this is an estimate tuned to BPE tokenizers of the
GPT family: words of up to four letters are one token, longer words one per four characters, and
each other symbol one token. It errs a little high, which is the safe side for budgets.
"""

import json
import re

_PIECES = re.compile(r"[A-Za-z]+|\d{1,3}|[^\sA-Za-z\d]")


def count_tokens(text: str) -> int:
    """Return the estimated number of tokens in text."""
    if not text:
        return 0
    total = 0
    for piece in _PIECES.findall(text):
        total += 1 if len(piece) <= 4 else (len(piece) + 3) // 4
    return total


def count_message_tokens(content: str, payload=None) -> int:
    """Return the tokens a message adds to a prompt: its content, its payload as JSON, framing."""
    tokens = 4 + count_tokens(content)
    if payload is not None:
        tokens += count_tokens(json.dumps(payload, ensure_ascii=False, separators=(",", ":")))
    return tokens
