"""Rolling compaction: fold older messages into the thread's running summary."""

from apps.observations.prompts import render_messages

VERSION = "compaction-1"

SYSTEM = """You maintain the running summary of a long conversation between a user and an AI agent.
You are given the current summary (possibly empty) and the messages that follow it. Write the new
summary, which replaces the old one and must stand alone:

- The user's goals and requests, and what was decided.
- What the agent did and found: tools used and their outcomes, errors met and how they ended.
- Every identifier exactly as written: ids, URLs, file names, numbers.
- Open questions and the state the work was left in.

Answer with a JSON object: {"summary": "..."}."""


def compaction_prompt(summary: str, messages) -> list[dict]:
    """Return the chat messages that ask for the summary updated with messages (in seq order)."""
    user = (
        f"Current summary:\n{summary or '(none yet)'}\n\n"
        f"Messages #{messages[0].seq}–#{messages[-1].seq}:\n\n{render_messages(messages)}"
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]
