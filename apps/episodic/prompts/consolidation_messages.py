"""How the consolidation prompts show a stretch of messages to the model."""

from functools import partial

from apps.providers.transcript import render_messages as _render_messages

# Consolidation judges many messages at once: each is cut shorter than for the Observer.
render_messages = partial(_render_messages, max_chars=4_000)
