"""Memory settings over HTTP with a project-admin key: change, 409, 400, versions, rollback."""

import pytest

from apps.audit.models import AuditEvent


def level(client, **params):
    response = client.get("/api/v1/config/level", params)
    assert response.status_code == 200, response.content
    return response.json()


def change(client, body, expect=200):
    response = client.patch("/api/v1/config", body, format="json")
    assert response.status_code == expect, response.content
    return response.json()


def test_an_admin_change_shows_in_the_next_context(alice, admin):
    thread = alice.new_thread()
    alice.append(thread["id"], *({"role": "user", "content": f"turn {n}"} for n in range(6)))
    before = alice.post(f"/api/v1/threads/{thread['id']}/context", {}).json()
    current = level(admin, level="agent")

    changed = change(
        admin,
        {
            "level": "agent",
            "version": current["version"],
            "values": {"context_strategy": "none", "recent_window": 2},
        },
    )

    after = alice.post(f"/api/v1/threads/{thread['id']}/context", {}).json()
    assert [m["content"] for m in before["messages"]] == [f"turn {n}" for n in range(6)]
    assert [m["content"] for m in after["messages"]] == ["turn 4", "turn 5"]
    assert changed == {
        "level": "agent",
        "project": "acme",
        "agent": "alice",
        "version": current["version"] + 1,
        "values": {"context_strategy": "none", "recent_window": 2},
    }
    assert alice.get("/api/v1/config").json()["sources"]["recent_window"] == "agent"
    record = AuditEvent.objects.get(action="config.update")
    assert record.actor.startswith("admin-key:acme/alice mc_")
    assert record.after == {"context_strategy": "none", "recent_window": 2}


def test_a_project_level_change_reaches_every_agent_of_the_project(alice, bob, carol, admin):
    change(admin, {"level": "project", "version": 0, "values": {"knowledge_top_k": 7}})

    assert bob.get("/api/v1/config").json()["values"]["knowledge_top_k"] == 7
    assert bob.get("/api/v1/config").json()["sources"]["knowledge_top_k"] == "project"
    assert carol.get("/api/v1/config").json()["values"]["knowledge_top_k"] == 5


def test_an_admin_changes_another_agent_of_its_project_but_not_of_another(alice, bob, carol, admin):
    change(admin, {"level": "agent", "agent": "bob", "version": 0, "values": {"notes_top_k": 0}})

    assert bob.get("/api/v1/config").json()["values"]["notes_top_k"] == 0
    response = admin.patch(
        "/api/v1/config",
        {"level": "agent", "agent": "carol", "version": 0, "values": {"notes_top_k": 0}},
        format="json",
    )
    assert response.status_code == 404
    assert response.json()["error"]["details"] == {"agent": ["No agent 'carol' in this project."]}
    assert carol.get("/api/v1/config").json()["values"]["notes_top_k"] == 3


def test_a_stale_version_is_a_409_and_changes_nothing(alice, admin):
    change(admin, {"level": "project", "version": 0, "values": {"recent_window": 5}})

    response = admin.patch(
        "/api/v1/config",
        {"level": "project", "version": 0, "values": {"recent_window": 9}},
        format="json",
    )

    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "stale_version"
    assert error["details"] == {"current_version": 1}
    assert level(admin, level="project")["values"] == {"recent_window": 5}


@pytest.mark.parametrize(
    ("body", "field", "said"),
    [
        (
            {"level": "project", "version": 0, "values": {"recent_window": "five"}},
            "values.recent_window",
            "got a string",
        ),
        # A JSON value of another type is refused, not read as the setting's type.
        (
            {"level": "project", "version": 0, "values": {"recent_window": "20"}},
            "values.recent_window",
            "Expected an integer, got a string",
        ),
        (
            {"level": "project", "version": 0, "values": {"recent_window": 20.0}},
            "values.recent_window",
            "Expected an integer, got a number",
        ),
        (
            {"level": "project", "version": 0, "values": {"semantic_recall_enabled": "true"}},
            "values.semantic_recall_enabled",
            "got a string",
        ),
        (
            {"level": "project", "version": 0, "values": {"embedder_model": "\u0000"}},
            "values.embedder_model",
            "NUL character",
        ),
        (
            {"level": "project", "version": 0, "values": {"recent_window": 2000}},
            "values.recent_window",
            "must be at most 1000",
        ),
        (
            {"level": "project", "version": 0, "values": {"no_such_setting": 1}},
            "values.no_such_setting",
            "unknown setting",
        ),
        (
            {"level": "agent", "version": 0, "values": {"embedder_model": "x"}},
            "values.embedder_model",
            "is set per project",
        ),
        ({"level": "project", "values": {"recent_window": 5}}, "version", "required"),
        ({"level": "everywhere", "version": 0, "values": {"a": 1}}, "level", "not a valid"),
        ({"level": "project", "version": 0, "values": {}}, "values", "empty"),
        (
            {"level": "project", "agent": "alice", "version": 0, "values": {"recent_window": 5}},
            "agent",
            "Only with level=agent",
        ),
        ({"level": "project", "version": 0, "values": {}, "colour": 1}, "colour", "Unknown"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(admin, body, field, said):
    response = admin.patch("/api/v1/config", body, format="json")

    assert response.status_code == 400, response.content
    message = response.json()["error"]["message"]
    assert message.startswith(f"{field}:"), message
    assert said in message
    assert AuditEvent.objects.filter(action="config.update").count() == 0


def test_versions_are_listed_and_a_level_rolls_back(alice, admin):
    change(admin, {"level": "agent", "version": 0, "values": {"recent_window": 3}})
    change(admin, {"level": "agent", "version": 1, "values": {"recent_window": 4}, "note": "why"})

    page = admin.get("/api/v1/config/versions", {"level": "agent", "limit": 1}).json()
    rest = admin.get(page["next"]).json()
    rolled = admin.post(
        "/api/v1/config/rollback", {"level": "agent", "to_version": 1}, format="json"
    )
    missing = admin.post(
        "/api/v1/config/rollback", {"level": "agent", "to_version": 9}, format="json"
    )

    assert [(v["version"], v["after"], v["note"]) for v in page["results"]] == [
        (2, {"recent_window": 4}, "why")
    ]
    assert [(v["version"], v["before"]) for v in rest["results"]] == [(1, {})]
    assert rest["next"] is None
    assert rolled.status_code == 200
    assert rolled.json()["version"] == 3 and rolled.json()["values"] == {"recent_window": 3}
    assert alice.get("/api/v1/config").json()["values"]["recent_window"] == 3
    assert missing.status_code == 400
    assert missing.json()["error"]["message"].startswith("to_version: This level has no version 9")
