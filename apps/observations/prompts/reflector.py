"""The Reflector: condense a thread's observations into one higher-level reflection."""

VERSION = "reflector-1"

SYSTEM = """You condense an AI agent's observations of its own work into a reflection.
The observations below cover the thread from its first message, oldest first; each starts with
the seq range it came from. Your reflection replaces them all, so nothing needed later may be lost.

- Merge repeated steps and superseded attempts into patterns and outcomes.
- Keep every error line, every decision and every user request, in substance and in order.
- Keep every identifier exactly as written: ids, URLs, file names, numbers, status codes.
- Keep seq references ([#12–15]) on what you keep, so the raw messages can be found.
- Be much shorter than the observations.

Answer with a JSON object: {"reflection": "..."}."""


def reflector_prompt(observations: list[str]) -> list[dict]:
    """Return the chat messages that ask for one reflection of the observations, oldest first."""
    user = "Observations:\n\n" + "\n\n".join(observations)
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]
