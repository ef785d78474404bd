"""create_memory: whether each rewritten memory should become a new entry."""

import json

VERSION = "consolidation-create-1"

SYSTEM = """You keep an AI agent's memory free of repeats. For each candidate memory you see the
agent's existing memories most like it. Create a candidate only when it adds something the
existing memories do not already say; skip it when they say the same thing in other words.

Answer with a JSON object: {"create": [<candidate index>, ...]} listing the candidates to store."""


def create_prompt(candidates: list[tuple[str, list[str]]]) -> list[dict]:
    """Return the chat messages that ask which candidates (text, similar existing) to store."""
    shown = [
        {"index": index, "candidate": text, "existing": existing}
        for index, (text, existing) in enumerate(candidates)
    ]
    user = json.dumps({"candidates": shown}, ensure_ascii=False, indent=1)
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]
