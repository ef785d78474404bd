"""A tool loop logged the way examples/agent_loop.py logs it: the tool's output in `content`,
`payload: {"tool_call_id": …}` naming the call, and nothing else said about the outcome.

Six turns, each a user request, six refund steps (a call and its result) and an answer: 84
messages, 36 steps, 24 of them failing in three shapes, eight of each: a JSON body with status
502, a JSON body with ok false, and an `Error: …` text. The successful results mention amounts
such as "489.00 EUR", which are not errors.
"""

import json

TURNS = 6
STEPS_PER_TURN = 6
FAILURES = 24
ERROR_TEXT = "Error: refund window closed for payment pay-{n}"


def _result(step: int) -> str:
    """The tool output of step: two of every three fail, in turn as 502, ok false, Error text."""
    n = 1000 + step
    if step % 3 == 2:
        return json.dumps({"status": 200, "refund_id": f"rf-{n}", "amount": "489.00 EUR"})
    shape = (step // 3 * 2 + step % 3) % 3
    if shape == 0:
        return json.dumps({"status": 502, "detail": f"payments-svc gave no answer for pay-{n}"})
    if shape == 1:
        return json.dumps({"ok": False, "reason": f"card of pay-{n} expired"})
    return ERROR_TEXT.format(n=n)


def agent_loop_messages() -> list[dict]:
    """Return the loop's messages in the API's shape, in order."""
    messages = []
    for turn in range(TURNS):
        messages.append({"role": "user", "content": f"Please refund order O-{700 + turn}."})
        for index in range(STEPS_PER_TURN):
            step = turn * STEPS_PER_TURN + index
            call_id = f"call_{step}"
            arguments = json.dumps({"payment_id": f"pay-{1000 + step}", "amount": "489.00"})
            messages += [
                {
                    "role": "assistant",
                    "kind": "tool_call",
                    "name": "refund_payment",
                    "payload": {"id": call_id, "arguments": arguments},
                },
                {
                    "role": "tool",
                    "kind": "tool_result",
                    "name": "refund_payment",
                    "content": _result(step),
                    "payload": {"tool_call_id": call_id},
                },
            ]
        messages.append({"role": "assistant", "content": f"Done with order O-{700 + turn}."})
    return messages


def failing_results() -> list[str]:
    """Return the content of every failing result, in order."""
    return [_result(step) for step in range(TURNS * STEPS_PER_TURN) if step % 3 != 2]


def agent_loop_thread(actor, title: str = "Refund loop") -> dict:
    """Store the loop for actor (a tests.conftest.Actor) as the agent would; return the thread."""
    thread = actor.new_thread(title=title)
    messages = agent_loop_messages()
    for start in range(0, len(messages), 2 + 2 * STEPS_PER_TURN):
        actor.append(thread["id"], *messages[start : start + 2 + 2 * STEPS_PER_TURN])
    return thread
