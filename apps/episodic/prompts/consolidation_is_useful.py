"""is_useful: which messages that left the short-term window are worth remembering."""

from apps.episodic.prompts.consolidation_messages import render_messages

VERSION = "consolidation-is-useful-1"

SYSTEM = """You decide which of an AI agent's past messages are worth keeping in its long-lived
memory about the user it serves. Each message is headed by its sequence number (#n).

Keep a message when it holds something the agent will need in later conversations: a fact the
user stated about themselves, their work or their systems; a decision or preference; an error
with its cause; the outcome of a task (what was built, fixed, deployed, failed).
Discard small talk and acknowledgements ("ok", "thanks", "got it", greetings), questions that
state nothing, tool calls, empty or routine tool results, and anything only true for a moment.

Answer with a JSON object: {"useful": [<seq>, ...]} listing the seqs to keep (may be empty)."""


def is_useful_prompt(messages) -> list[dict]:
    """Return the chat messages that ask which of messages (in seq order) are worth keeping."""
    first, last = messages[0].seq, messages[-1].seq
    user = f"Messages #{first}–#{last}:\n\n{render_messages(messages)}"
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]
