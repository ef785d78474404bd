"""Which tool call a result answers: by the `tool_call_id` it carries, else the call just before.

A call names its id as `id` or `tool_call_id`, a result names its call's as `tool_call_id`, in
`payload` or in `metadata` (whichever the agent logs). A result is a tool_result, or an error
that a tool answered (role tool) or that carries a call's id.
"""


def call_id(message) -> str:
    """Return the id a tool call is known by ("" when it has none)."""
    return _find(message, "id", "tool_call_id")


def answered_call_id(message) -> str:
    """Return the id of the call a result answers ("" when it does not say)."""
    return _find(message, "tool_call_id")


def answers_a_call(message) -> bool:
    """Whether message may answer a tool call: a result, or an error from a tool or naming one."""
    if message.kind == "tool_result":
        return True
    return message.kind == "error" and (message.role == "tool" or bool(answered_call_id(message)))


def answers_adjacent(result, call) -> bool:
    """Whether a result with no known call id answers the call just before it (same tool)."""
    return not result.name or not call.name or result.name == call.name


def _find(message, *keys) -> str:
    for source in (message.payload, message.metadata):
        if isinstance(source, dict):
            for key in keys:
                value = source.get(key)
                if isinstance(value, str | int) and not isinstance(value, bool) and value != "":
                    return str(value)
    return ""
