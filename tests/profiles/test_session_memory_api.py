import json

import pytest

from apps.audit.models import AuditEvent
from apps.profiles.models import (
    LIST_ITEM_MAX_CHARS,
    LIST_MAX_ITEMS,
    OBJECTIVE_MAX_CHARS,
    STATE_MAX_CHARS,
    SessionMemory,
)

FULL = {
    "objective": "Get the VPN working again",
    "decisions": ["Reset the tunnel first", "Skip the firmware update"],
    "state": "Tunnel reset; waiting for the user to reconnect.",
    "follow_ups": ["Ask whether drops continue after 5pm"],
}


def _url(thread: dict) -> str:
    return f"/api/v1/threads/{thread['id']}/session-memory"


def _send(actor, url: str, body: dict):
    # json.dumps escapes lone surrogates as \udXXX, exactly as a client in another language would.
    return actor.client.generic("PUT", url, json.dumps(body), content_type="application/json")


def test_a_thread_without_session_memory_reads_as_the_empty_version_0(alice):
    thread = alice.new_thread()

    response = alice.get(_url(thread))

    assert response.status_code == 200
    assert response.json() == {
        "thread_id": thread["id"],
        "objective": "",
        "decisions": [],
        "state": "",
        "follow_ups": [],
        "version": 0,
        "updated_at": None,
        "updated_by": "",
    }


def test_the_first_write_sends_version_0_and_later_ones_the_version_read(alice):
    thread = alice.new_thread()

    first = alice.put(_url(thread), {"version": 0, **FULL})
    second = alice.put(_url(thread), {"version": 1, "objective": "Close the ticket"})

    assert first.status_code == 200, first.content
    assert {key: first.json()[key] for key in FULL} == FULL
    assert (first.json()["version"], first.json()["updated_by"]) == (1, "agent:acme/alice")
    assert first.json()["thread_id"] == thread["id"]
    assert second.status_code == 200, second.content
    stored = alice.get(_url(thread)).json()
    assert stored == second.json()
    assert (stored["version"], stored["objective"], stored["decisions"]) == (
        2,
        "Close the ticket",
        [],
    )


def test_a_stale_version_is_a_409_with_the_current_version(alice):
    thread = alice.new_thread()
    alice.put(_url(thread), {"version": 0, "objective": "a"})
    alice.put(_url(thread), {"version": 1, "objective": "b"})

    stale = alice.put(_url(thread), {"version": 1, "objective": "c"})
    second_create = alice.put(_url(thread), {"version": 0, "objective": "d"})

    for response in (stale, second_create):
        assert response.status_code == 409, response.content
        assert response.json()["error"]["code"] == "stale_version"
        assert response.json()["error"]["details"] == {"current_version": 2}
    assert alice.get(_url(thread)).json()["objective"] == "b"


def test_other_agents_get_404_and_cannot_change_it(alice, bob, carol):
    thread = alice.new_thread()
    alice.put(_url(thread), {"version": 0, **FULL})

    for outsider in (bob, carol):
        read = outsider.get(_url(thread))
        write = outsider.put(_url(thread), {"version": 1, "objective": "hijacked"})

        assert read.status_code == 404
        assert write.status_code == 404
        assert write.json()["error"]["code"] == "not_found"
    assert alice.get(_url(thread)).json()["objective"] == FULL["objective"]


def test_an_outsider_gets_404_even_for_an_invalid_body(alice, bob):
    thread = alice.new_thread()

    response = bob.put(_url(thread), {"colour": "red"})

    assert response.status_code == 404


def test_the_largest_values_are_stored(alice):
    thread = alice.new_thread()
    items = ["x" * LIST_ITEM_MAX_CHARS] * LIST_MAX_ITEMS
    body = {
        "version": 0,
        "objective": "o" * OBJECTIVE_MAX_CHARS,
        "decisions": items,
        "state": "s" * STATE_MAX_CHARS,
        "follow_ups": items,
    }

    response = alice.put(_url(thread), body)

    assert response.status_code == 200, response.content[:300]
    assert len(alice.get(_url(thread)).json()["decisions"]) == LIST_MAX_ITEMS


@pytest.mark.parametrize(
    "body, message",
    [
        ({"version": 0, "colour": "red"}, "colour: Unknown field. Allowed fields: version, "),
        ({"objective": "x"}, "version: This field is required."),
        ({"version": 0, "objective": "o" * 2001}, "objective: At most 2000 characters;"),
        ({"version": 0, "state": "s" * 10_001}, "state: At most 10000 characters;"),
        ({"version": 0, "decisions": ["d"] * 101}, "decisions: At most 100 items; merge some."),
        ({"version": 0, "follow_ups": ["ok", "f" * 1001]}, "follow_ups[1]: At most 1000 char"),
        ({"version": 0, "decisions": [5]}, "decisions[0]: Expected a string, got a number."),
        ({"version": 0, "decisions": [{"text": "x"}]}, "decisions[0]: Expected a string, got an"),
        ({"version": 0, "decisions": "just one"}, "decisions: Expected a list of items"),
        ({"version": 0, "objective": 3}, "objective: Expected a string, got a number."),
        ({"version": 0, "follow_ups": ["a\u0000"]}, "follow_ups[0]: The text contains the NUL"),
        ({"version": 0, "state": "\udfff"}, "state: The text contains a lone UTF-16 surrogate"),
    ],
    ids=[
        "unknown-field",
        "no-version",
        "long-objective",
        "long-state",
        "too-many-decisions",
        "long-follow-up",
        "number-item",
        "object-item",
        "not-a-list",
        "number-objective",
        "nul",
        "lone-surrogate",
    ],
)
def test_it_refuses_bad_input_naming_the_field(alice, body, message):
    thread = alice.new_thread()

    response = _send(alice, _url(thread), body)

    assert response.status_code == 400, response.content[:300]
    assert response.json()["error"]["message"].startswith(message)
    assert not SessionMemory.objects.exists()


def test_each_write_is_audited_with_the_state_before_and_after(alice):
    thread = alice.new_thread()
    alice.put(_url(thread), {"version": 0, **FULL})
    alice.put(_url(thread), {"version": 1, **FULL, "state": "Resolved."})

    events = list(AuditEvent.objects.filter(action="session_memory.write").order_by("id"))

    assert len(events) == 2
    assert events[0].before is None
    assert events[0].after == {"version": 1, **FULL}
    assert events[1].before == {"version": 1, **FULL}
    assert events[1].after == {"version": 2, **FULL, "state": "Resolved."}
    assert {e.actor for e in events} == {"agent:acme/alice"}
    assert {e.object_type for e in events} == {"session_memory"}
