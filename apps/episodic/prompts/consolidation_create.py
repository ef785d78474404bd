"""create_memory: whether each rewritten memory should become a new entry."""

import json

VERSION = "consolidation-create-2"

SYSTEM = """You keep an AI agent's memory free of repeats and up to date. For each candidate
memory you see the agent's existing memories most like it, each with its id. Create a candidate
only when it adds something the existing memories do not already say; skip it when they say the
same thing in other words. When a candidate you create changes the value of an existing memory
about the same subject (a new address, a fix that replaced an earlier fix, a changed plan), name
that memory's id: the old one is then kept for history but no longer used.

Answer with a JSON object: {"create": [<candidate index>, ...], "supersedes": {"<candidate
index>": "<existing id>", ...}}; leave "supersedes" empty when nothing changed."""


def create_prompt(candidates: list[tuple[str, list[tuple[str, str]]]]) -> list[dict]:
    """Return the chat messages that ask which candidates to store and what each replaces.

    Each candidate comes with its similar existing entries as (id, text).
    """
    shown = [
        {
            "index": index,
            "candidate": text,
            "existing": [{"id": entry_id, "content": said} for entry_id, said in existing],
        }
        for index, (text, existing) in enumerate(candidates)
    ]
    user = json.dumps({"candidates": shown}, ensure_ascii=False, indent=1)
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]
