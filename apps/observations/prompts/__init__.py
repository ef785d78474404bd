"""The prompts of the Observer, the Reflector and compaction, one module each.

Each module's VERSION is stored on every row its prompt produced, so that a changed prompt can be
told apart in the data (and its rows rebuilt) without guessing from dates.
"""

import json

_MESSAGE_CHARS = 16_000  # one message in a prompt: a huge tool result is cut, not the prompt


def render_messages(messages) -> str:
    """Return messages as prompt text: one block per message, headed by its seq, role and kind."""
    blocks = []
    for message in messages:
        head = f"#{message.seq} {message.role}"
        if message.kind != "message":
            head += f" {message.kind}"
        if message.name:
            head += f" {message.name}"
        body = message.content
        if message.payload is not None:
            payload = json.dumps(message.payload, ensure_ascii=False, separators=(",", ":"))
            body = f"{body}\n{payload}" if body else payload
        if len(body) > _MESSAGE_CHARS:
            body = body[:_MESSAGE_CHARS] + f"… [{len(body) - _MESSAGE_CHARS} more characters]"
        blocks.append(f"{head}:\n{body}")
    return "\n\n".join(blocks)
