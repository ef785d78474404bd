"""The prompts of the Observer, the Reflector and compaction, one module each.

Each module's VERSION is stored on every row its prompt produced, so that a changed prompt can be
told apart in the data (and its rows rebuilt) without guessing from dates.
"""

from functools import partial

from apps.providers.transcript import render_messages as _render_messages

# One message in a prompt: a huge tool result is cut, not the prompt.
render_messages = partial(_render_messages, max_chars=16_000)
