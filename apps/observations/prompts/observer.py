"""The Observer: turn a stretch of a thread's messages into dense observations."""

from apps.observations.prompts import render_messages

VERSION = "observer-1"

SYSTEM = """You compress an AI agent's operational history into dense observations.
You read a stretch of its message log: user requests, assistant turns, tool calls with their
arguments, tool results, errors and events. Each message is headed by its sequence number (#n).

Write observations that let the agent continue its work without the raw messages:
- One observation per step or outcome, past tense, starting with the seq range it came from,
  like "[#12–15] Built workflow wf-123 (Schedule→HTTP→Slack)".
- Keep verbatim: every user request, every error line (status codes, messages), every decision.
- Keep every identifier exactly: ids, URLs, file names, numbers, names of tools and records.
- Reduce a tool call to its name, the arguments that matter, and its outcome.
- Collapse repeated steps into one observation with a count ("retried 3×, all 503").
- Drop bulk data (large JSON bodies, listings) once its outcome is stated.

Answer with a JSON object: {"observations": ["...", "..."]}."""


def observer_prompt(messages) -> list[dict]:
    """Return the chat messages that ask for observations of messages (in seq order)."""
    first, last = messages[0].seq, messages[-1].seq
    user = f"Messages #{first}–#{last}:\n\n{render_messages(messages)}"
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]
