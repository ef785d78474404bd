"""How a prompt shows a stretch of a thread's messages to a model."""

import json


def render_messages(messages, *, max_chars: int) -> str:
    """Return messages as prompt text: one block per message, headed by its seq, role and kind.

    A message longer than max_chars (a huge tool result) is cut, not the prompt.
    """
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
        if len(body) > max_chars:
            body = body[:max_chars] + f"… [{len(body) - max_chars} more characters]"
        blocks.append(f"{head}:\n{body}")
    return "\n\n".join(blocks)
