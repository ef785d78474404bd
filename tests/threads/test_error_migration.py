"""Migration 0002: messages stored before it are judged by threads.outcome, as appends are now."""

from tests.conftest import make_actor
from tests.migrating import migrate

BEFORE = [("threads", "0001_initial")]
AFTER = [("threads", "0002_message_is_error")]


def test_it_marks_the_stored_errors_of_an_agent_loop(back_to_latest):
    alice = make_actor("acme", "alice")
    thread = alice.new_thread()["id"]
    old = migrate(BEFORE)
    Message = old.get_model("threads", "Message")
    rows = [
        ("tool_result", '{"status": 502, "detail": "no answer"}', {"tool_call_id": "c1"}),
        ("tool_result", '{"ok": false}', {"tool_call_id": "c2"}),
        ("tool_result", "Error: refund window closed", {"tool_call_id": "c3"}),
        ("tool_result", "Refunded 489.00 EUR", {"tool_call_id": "c4"}),
        ("error", "gave up", None),
        ("message", "Error: the user typed this", None),
    ]
    for seq, (kind, content, payload) in enumerate(rows, start=1):
        role = "user" if kind == "message" else "tool"
        Message.objects.create(
            thread_id=thread, seq=seq, role=role, kind=kind, content=content, payload=payload
        )

    models = migrate(AFTER)

    stored = models.get_model("threads", "Message").objects.filter(thread_id=thread)
    flags = list(stored.order_by("seq").values_list("is_error", flat=True))
    assert flags == [True, True, True, False, True, False]
