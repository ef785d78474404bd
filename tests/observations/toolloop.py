"""A deterministic, tool-heavy agent loop: the thread observational memory is built for.

300 messages: user requests now and then; tool calls with JSON arguments; ~500-token JSON results;
429 and 503 failures followed by retries of the same call; short assistant decisions.
Used by the tests and by bench/observations.py.
"""

import json
import random

ERRORS = [
    (429, "HTTP 429 Too Many Requests: rate limit exceeded for {url} (retry after 2s)"),
    (503, "HTTP 503 Service Unavailable: upstream inventory-svc timed out for {url}"),
]
TOOLS = ["fetch_records", "http_get", "run_query"]


def _result(rng: random.Random, step: int) -> str:
    """Return a JSON tool result of about 500 tokens."""
    items = [
        {
            "id": f"item-{step}-{index}",
            "name": rng.choice(["alpha", "bravo", "charlie", "delta", "echo"]) + " widget",
            "price": round(rng.uniform(1, 500), 2),
            "stock": rng.randint(0, 900),
            "warehouse": rng.choice(["north", "south", "east", "west"]),
            "tags": rng.sample(["new", "sale", "bulk", "fragile", "cold", "hazmat"], 2),
        }
        for index in range(12)
    ]
    return json.dumps({"status": 200, "page": step, "total": 12 * step + 7, "items": items})


def tool_loop(count: int = 300, seed: int = 7) -> list[dict]:
    """Return count messages in the API's shape, in order."""
    rng = random.Random(seed)
    messages: list[dict] = []
    step = 0
    while len(messages) < count:
        step += 1
        if step % 12 == 1:
            ticket = 4000 + step
            messages.append(
                {
                    "role": "user",
                    "content": f"Please reconcile batch B-{step} against ticket #{ticket} and "
                    f"report to https://ops.example.com/tickets/{ticket}.",
                }
            )
        tool = TOOLS[step % len(TOOLS)]
        url = f"https://api.example.com/v2/items?page={step}"
        call = {
            "role": "assistant",
            "kind": "tool_call",
            "name": tool,
            "payload": {"arguments": {"url": url, "batch": f"B-{step}", "limit": 12}},
        }
        if step % 7 == 3:  # a failure, retried with the same call until it passes
            status, text = ERRORS[step % 2]
            for _ in range(1 + step % 3):
                messages.append(dict(call))
                messages.append(
                    {
                        "role": "tool",
                        "kind": "error",
                        "name": tool,
                        "content": text.format(url=url),
                        "payload": {"status": status},
                    }
                )
        messages.append(dict(call))
        messages.append(
            {"role": "tool", "kind": "tool_result", "name": tool, "content": _result(rng, step)}
        )
        if step % 4 == 0:
            messages.append(
                {
                    "role": "assistant",
                    "content": f"Decision: batch B-{step} matches; moving on to B-{step + 1}.",
                }
            )
    return messages[:count]


def error_lines(messages: list[dict]) -> set[str]:
    """Return the text of every error message of the loop."""
    return {m["content"] for m in messages if m.get("kind") == "error"}


def user_requests(messages: list[dict]) -> set[str]:
    """Return the text of every user request of the loop."""
    return {m["content"] for m in messages if m["role"] == "user"}
