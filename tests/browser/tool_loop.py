"""A tool-heavy agent loop as an agent logs it through the API: 300 messages in five runs.

Each run: the user's request, 29 tool calls each with its result (about 500 tokens of JSON,
some of them 429 / 503 errors, paired by tool_call_id), and the answer. The fourth run ends
with an error message and is finished as failed.
"""

import json
from datetime import UTC, datetime, timedelta

RUNS = 5
PAIRS_PER_RUN = 29
FAILED_RUN = 3  # zero-based
RUN_ERROR = "carrier API kept answering 503 after 3 retries"


def _events(number: int) -> list[dict]:
    return [
        {
            "at": f"2026-11-{1 + i % 20:02d}T0{i % 10}:00:00Z",
            "where": f"Depot {number}-{i}",
            "status": "in transit",
            "note": "parcel scanned at the sorting centre and loaded for the next leg",
        }
        for i in range(12)
    ]


def tool_loop_messages(run_ids: list[str]) -> list[list[dict]]:
    """The messages of each run, in order; timestamps one second apart, results after calls."""
    start = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
    clock = iter(start + timedelta(seconds=n) for n in range(10_000))
    runs = []
    for number, run_id in enumerate(run_ids):
        at = lambda: next(clock).isoformat()  # noqa: E731
        messages = [
            {
                "role": "user",
                "content": f"Where is parcel {4400 + number}? It was due yesterday.",
                "run_id": run_id,
                "created_at": at(),
            }
        ]
        for pair in range(PAIRS_PER_RUN):
            call_id = f"call_{number}_{pair}"
            messages.append(
                {
                    "role": "assistant",
                    "kind": "tool_call",
                    "name": "track_parcel",
                    "payload": {
                        "id": call_id,
                        "arguments": json.dumps({"carrier": "DHL", "include_events": True}),
                    },
                    "run_id": run_id,
                    "created_at": at(),
                }
            )
            failing = pair % 7 == 3
            body = (
                {"status": 429 if pair % 2 else 503, "error": "rate limited, retry later"}
                if failing
                else {"carrier": "DHL", "parcel": 4400 + number, "events": _events(pair)}
            )
            messages.append(
                {
                    "role": "tool",
                    "kind": "tool_result",
                    "name": "track_parcel",
                    "content": json.dumps(body),
                    "payload": {
                        "tool_call_id": call_id,
                        **({"status": body["status"]} if failing else {}),
                    },
                    "run_id": run_id,
                    "created_at": at(),
                }
            )
        if number == FAILED_RUN:
            last = {"role": "assistant", "kind": "error", "content": RUN_ERROR}
        else:
            last = {
                "role": "assistant",
                "content": "Your parcel is in transit; it arrives tomorrow.",
            }
        messages.append({**last, "run_id": run_id, "created_at": at()})
        runs.append(messages)
    return runs


def tool_loop_thread(actor) -> dict:
    """Store the loop for actor (a tests.conftest.Actor); return the thread."""
    thread = actor.new_thread(title="Parcel tracking loop")
    run_ids = [
        actor.post(f"/api/v1/threads/{thread['id']}/runs", {"name": f"turn {n + 1}"}).json()["id"]
        for n in range(RUNS)
    ]
    for number, (run_id, messages) in enumerate(
        zip(run_ids, tool_loop_messages(run_ids), strict=True)
    ):
        actor.append(thread["id"], *messages)
        failed = number == FAILED_RUN
        finish = {"status": "failed", "error": RUN_ERROR} if failed else {"status": "succeeded"}
        if not failed:
            finish["summary"] = "told the user where the parcel is"
        response = actor.post(f"/api/v1/runs/{run_id}/finish", finish)
        assert response.status_code == 200, response.content
    return thread
