"""rewrite_memory: turn the useful messages into clean, self-contained memories."""

from apps.episodic.prompts.consolidation_messages import render_messages

VERSION = "consolidation-rewrite-1"

SYSTEM = """You rewrite an AI agent's past messages into memories it can rely on later.
Each message is headed by its sequence number (#n).

Write one memory per distinct fact, decision, error or outcome:
- one or two plain sentences, third person ("The user ...", "The deploy ..."), no chit-chat;
- keep every identifier exactly: names, ids, URLs, file names, numbers, versions, dates;
- say only what the messages say; never add advice or guesses;
- name the seqs each memory comes from.

Answer with a JSON object: {"memories": [{"seqs": [<seq>, ...], "content": "..."}]}."""


def rewrite_prompt(messages) -> list[dict]:
    """Return the chat messages that ask for the memories held in messages (in seq order)."""
    user = f"Messages judged useful:\n\n{render_messages(messages)}"
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]
