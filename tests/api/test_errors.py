"""A service's error names its field in details too, as a serializer's field errors do."""

import pytest

from apps.memconfig.services import config_update


@pytest.fixture
def run(alice):
    thread = alice.new_thread()
    return alice.post(f"/api/v1/threads/{thread['id']}/runs", {"name": "build"}).json()


def test_a_service_error_names_its_field_in_details(alice, run):
    config_update(agent=alice.agent, changes={"episodic_max_entry_length": 100}, changed_by="t")

    artifact = alice.post(
        f"/api/v1/runs/{run['id']}/artifacts", {"name": "a.md", "kind": "Big Kind", "content": "x"}
    )
    entry = alice.post("/api/v1/episodic", {"content": "x" * 150})

    assert artifact.status_code == 400
    error = artifact.json()["error"]
    assert error["details"] == {"kind": [error["message"].removeprefix("kind: ")]}
    assert entry.json()["error"]["details"] == {
        "content": ["150 characters; the limit (episodic_max_entry_length) is 100."]
    }


def test_an_error_that_names_no_field_keeps_empty_details(alice):
    response = alice.get("/api/v1/threads/0192f0a1-0000-7000-8000-000000000000")

    assert response.status_code == 404
    assert response.json()["error"]["details"] == {}
