import json

import pytest

from apps.audit.models import AuditEvent
from apps.profiles.models import PROFILE_MAX_CHARS
from apps.tenancy.models import Resource


def _url(resource_id: str) -> str:
    return f"/api/v1/resources/{resource_id}/profile"


def _send(actor, url: str, body: dict):
    # json.dumps escapes lone surrogates as \udXXX, exactly as a client in another language would.
    return actor.client.generic("PUT", url, json.dumps(body), content_type="application/json")


def test_a_known_end_user_without_a_profile_reads_as_version_0(alice):
    alice.new_thread(resource_id="cust-1")

    response = alice.get(_url("cust-1"))

    assert response.status_code == 200
    assert response.json() == {
        "resource_id": "cust-1",
        "content": "",
        "version": 0,
        "updated_at": None,
        "updated_by": "",
    }


def test_an_end_user_the_project_does_not_know_is_a_404(alice):
    response = alice.get(_url("nobody"))

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_the_first_write_sends_version_0_and_creates_the_end_user(alice):
    written = alice.put(_url("new-user"), {"version": 0, "content": "# Ana\nPrefers email."})

    assert written.status_code == 200, written.content
    body = written.json()
    assert (body["resource_id"], body["version"]) == ("new-user", 1)
    assert body["content"] == "# Ana\nPrefers email."
    assert body["updated_by"] == "agent:acme/alice"
    assert body["updated_at"]
    assert alice.get(_url("new-user")).json() == body
    assert Resource.objects.filter(project=alice.agent.project, external_id="new-user").exists()


def test_each_write_with_the_current_version_replaces_the_profile(alice):
    first = alice.put(_url("cust-1"), {"version": 0, "content": "Prefers email."})
    second = alice.put(_url("cust-1"), {"version": 1, "content": "Prefers phone calls."})

    assert second.status_code == 200, second.content
    assert second.json()["version"] == 2
    assert second.json()["updated_at"] >= first.json()["updated_at"]
    assert alice.get(_url("cust-1")).json()["content"] == "Prefers phone calls."


def test_a_stale_version_is_a_409_with_the_current_version(alice):
    alice.put(_url("cust-1"), {"version": 0, "content": "a"})
    alice.put(_url("cust-1"), {"version": 1, "content": "b"})

    stale = alice.put(_url("cust-1"), {"version": 1, "content": "c"})
    second_create = alice.put(_url("cust-1"), {"version": 0, "content": "d"})
    ahead = alice.put(_url("cust-1"), {"version": 7, "content": "e"})

    for response in (stale, second_create, ahead):
        assert response.status_code == 409, response.content
        assert response.json()["error"]["code"] == "stale_version"
        assert response.json()["error"]["details"] == {"current_version": 2}
    assert alice.get(_url("cust-1")).json()["content"] == "b"


def test_a_version_other_than_0_for_an_unwritten_profile_is_a_409_and_creates_nothing(alice):
    response = alice.put(_url("never-seen"), {"version": 3, "content": "x"})

    assert response.status_code == 409
    assert response.json()["error"]["details"] == {"current_version": 0}
    assert not Resource.objects.filter(external_id="never-seen").exists()


def test_a_profile_is_the_agents_own_even_for_the_same_end_user(alice, bob):
    alice.put(_url("cust-1"), {"version": 0, "content": "alice's notes"})

    bob_reads = bob.get(_url("cust-1"))
    bob_writes = bob.put(_url("cust-1"), {"version": 0, "content": "bob's notes"})
    alice_unchanged = alice.get(_url("cust-1"))

    assert bob_reads.status_code == 200
    assert (bob_reads.json()["content"], bob_reads.json()["version"]) == ("", 0)
    assert bob_writes.status_code == 200, bob_writes.content
    assert bob.get(_url("cust-1")).json()["content"] == "bob's notes"
    assert alice_unchanged.json()["content"] == "alice's notes"
    assert alice_unchanged.json()["version"] == 1


def test_another_projects_agent_gets_404_and_writes_only_its_own(alice, carol):
    alice.put(_url("cust-1"), {"version": 0, "content": "alice's notes"})

    carol_reads = carol.get(_url("cust-1"))
    carol_writes = carol.put(_url("cust-1"), {"version": 0, "content": "carol's notes"})

    assert carol_reads.status_code == 404
    assert carol_reads.json()["error"]["code"] == "not_found"
    assert carol_writes.status_code == 200, carol_writes.content
    assert carol.get(_url("cust-1")).json()["content"] == "carol's notes"
    assert alice.get(_url("cust-1")).json()["content"] == "alice's notes"
    assert Resource.objects.filter(external_id="cust-1").count() == 2  # one per project


def test_an_end_user_id_may_contain_slashes(alice):
    written = alice.put(_url("crm/42"), {"version": 0, "content": "x"})

    assert written.status_code == 200, written.content
    assert alice.get(_url("crm/42")).json()["resource_id"] == "crm/42"


def test_the_largest_profile_is_stored_and_a_larger_one_is_a_400_naming_the_limit(alice):
    largest = alice.put(_url("cust-1"), {"version": 0, "content": "x" * PROFILE_MAX_CHARS})
    larger = alice.put(_url("cust-1"), {"version": 1, "content": "x" * (PROFILE_MAX_CHARS + 1)})

    assert largest.status_code == 200
    assert larger.status_code == 400
    assert larger.json()["error"]["message"] == "content: At most 20000 characters; condense it."
    assert alice.get(_url("cust-1")).json()["version"] == 1


@pytest.mark.parametrize(
    "body, message",
    [
        (
            {"version": 0, "content": "x", "colour": "red"},
            "colour: Unknown field. Allowed fields: version, content.",
        ),
        ({"content": "x"}, "version: This field is required."),
        ({"version": 0}, "content: This field is required."),
        ({"version": -1, "content": "x"}, "version: Ensure this value is greater than or equal"),
        ({"version": 0, "content": 42}, "content: Expected a string, got a number."),
        ({"version": 0, "content": ["x"]}, "content: Expected a string, got an array."),
        ({"version": 0, "content": "a\u0000b"}, "content: The text contains the NUL character"),
        ({"version": 0, "content": "a\ud800b"}, "content: The text contains a lone UTF-16"),
    ],
    ids=[
        "unknown-field",
        "no-version",
        "no-content",
        "negative-version",
        "number",
        "list",
        "nul",
        "lone-surrogate",
    ],
)
def test_it_refuses_bad_input_naming_the_field(alice, body, message):
    response = _send(alice, _url("cust-1"), body)

    assert response.status_code == 400, response.content
    assert response.json()["error"]["message"].startswith(message)
    assert not Resource.objects.filter(external_id="cust-1").exists()


def test_an_end_user_id_longer_than_the_column_is_a_400(alice):
    response = alice.put(_url("u" * 201), {"version": 0, "content": "x"})

    assert response.status_code == 400
    assert response.json()["error"]["message"].startswith("resource_id: At most 200 characters")


def test_each_write_is_audited_with_the_profile_before_and_after(alice):
    alice.put(_url("cust-1"), {"version": 0, "content": "Prefers email."})
    alice.put(_url("cust-1"), {"version": 1, "content": "Prefers phone."})
    alice.put(_url("cust-1"), {"version": 1, "content": "stale, not stored"})

    events = list(AuditEvent.objects.filter(action="profile.write").order_by("id"))

    assert [(e.actor, e.object_type) for e in events] == [("agent:acme/alice", "user_profile")] * 2
    assert events[0].before is None
    assert events[0].after == {"version": 1, "content": "Prefers email."}
    assert events[1].before == {"version": 1, "content": "Prefers email."}
    assert events[1].after == {"version": 2, "content": "Prefers phone."}
    assert events[1].project_id == alice.agent.project_id
    assert events[0].object_id == events[1].object_id
