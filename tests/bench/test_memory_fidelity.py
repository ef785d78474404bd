"""The fidelity benchmark's corpora and its retention count, checked in-process on stored
messages (bench/ on sys.path, as the script runs)."""

import sys
from pathlib import Path

from apps.threads.models import Message
from apps.threads.outcome import message_outcome

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import memory_fidelity  # noqa: E402


def test_the_tool_loop_logs_failures_as_the_agent_loop_does_and_they_read_as_errors(alice):
    loop = memory_fidelity.tool_loop()
    thread = alice.new_thread()["id"]
    for start in range(0, len(loop), 50):
        alice.append(thread, *loop[start : start + 50])
    results = Message.objects.filter(thread_id=thread, kind="tool_result").order_by("seq")

    failed = [message for message in results if message_outcome(message).error]

    assert len(loop) == 300 and all("tool_call_id" in m.payload for m in results)
    assert len(failed) >= 20  # the output says so; the kind does not
    assert {m.content[:9] for m in failed} >= {'{"status"', '{"ok": fa', "Error: ti"}


def test_retention_counts_what_memory_holds_whole(alice):
    thread = alice.new_thread()["id"]
    alice.append(
        thread,
        {"role": "user", "content": "Hi! Can you refund order A-48210? It cost 129.90 EUR."},
        {"role": "assistant", "content": "Refund R-9100 is on https://pay.example.com/r/9100."},
    )
    source = list(Message.objects.filter(thread_id=thread).order_by("seq"))
    items = {name: [0, 0] for name in ("errors", "requests", "identifiers", "numbers", "urls")}
    items["result identifiers"] = [0, 0]

    memory_fidelity._retention(source, "Can you refund order A-48210? R-9100 129.90", items)

    assert items["requests"] == [1, 1]
    assert items["urls"] == [1, 0]  # the URL is not in that memory
    assert items["identifiers"][0] >= 2 and items["identifiers"][1] >= 2
    assert items["numbers"] == [3, 3]  # 129.90, and 48210 and 9100 inside the identifiers
