"""Project-admin keys: memory settings and action webhooks over HTTP; agent keys get 403."""

import hashlib
import hmac
import io
import re

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from apps.actions.delivery import SIGNATURE_HEADER, TIMESTAMP_HEADER
from apps.audit.models import AuditEvent
from apps.jobs.services import job_run_pending
from apps.tenancy.services import api_key_issue
from tests.actions.test_actions import receiver_factory  # noqa: F401  (a fixture)
from tests.api.openapi import example_body, fill_path, operations
from tests.conftest import Actor


def admin_of(actor: Actor) -> APIClient:
    """A project-admin key of actor's agent, as a client."""
    key = api_key_issue(agent=actor.agent, scope="admin").secret
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return client


@pytest.fixture
def admin(alice) -> APIClient:
    return admin_of(alice)


@pytest.fixture
def loopback_allowed(settings):
    """Webhook addresses on loopback pass the outbound guard (no DNS in tests)."""
    settings.OUTBOUND_ALLOWED_NETWORKS = ["127.0.0.1/32"]


HOOK_URL = "http://127.0.0.1:9/hook"


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
            "must be a whole number",
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


def test_webhooks_are_managed_and_deliveries_signed_with_the_secret(
    alice,
    admin,
    receiver_factory,  # noqa: F811
):
    receiver = receiver_factory()
    created = admin.post("/api/v1/webhooks", {"name": "NOTIFY", "url": receiver.url}, format="json")
    assert created.status_code == 201, created.content
    hook = created.json()
    shown = admin.get("/api/v1/webhooks/secret")
    secret = shown.json()["secret"]
    rotated = admin.post("/api/v1/webhooks/secret/rotate").json()["secret"]
    paused = admin.patch(f"/api/v1/webhooks/{hook['id']}", {"active": False}, format="json")
    resumed = admin.patch(f"/api/v1/webhooks/{hook['id']}", {"active": True}, format="json")
    duplicate = admin.post(
        "/api/v1/webhooks", {"name": "NOTIFY", "url": receiver.url}, format="json"
    )

    thread = alice.new_thread()
    alice.append(thread["id"], {"role": "assistant", "content": "[[NOTIFY: ops]]"})
    job_run_pending()

    assert secret and rotated != secret
    assert "no-store" in shown["Cache-Control"]
    assert paused.json()["active"] is False and resumed.json()["active"] is True
    assert duplicate.status_code == 409
    assert duplicate.json()["error"]["details"] == {
        "name": ["The project already has a webhook for [[NOTIFY: …]]; change that one."]
    }
    listed = admin.get("/api/v1/webhooks").json()["results"]
    assert [(w["name"], w["url"]) for w in listed] == [("NOTIFY", receiver.url)]
    [(_, headers, body)] = receiver.requests
    signed = headers[TIMESTAMP_HEADER].encode() + b"." + body
    expected = hmac.new(rotated.encode(), signed, hashlib.sha256).hexdigest()
    assert headers[SIGNATURE_HEADER] == f"sha256={expected}"
    actions = set(AuditEvent.objects.values_list("action", flat=True))
    assert {"action_webhook.create", "action_webhook.update", "action_secret.rotate"} <= actions
    assert admin.delete(f"/api/v1/webhooks/{hook['id']}").status_code == 204
    assert admin.get("/api/v1/webhooks").json()["results"] == []


@pytest.mark.parametrize(
    ("body", "field", "said"),
    [
        ({"name": "notify", "url": "https://hooks.example.com/x"}, "name", "Upper case"),
        ({"name": "MEMORY", "url": "https://hooks.example.com/x"}, "name", "not an action"),
        ({"name": "NOTIFY", "url": "ftp://hooks.example.com/x"}, "url", "http or https"),
        ({"name": "NOTIFY", "url": "http://127.0.0.1:9/x"}, "url", "Refused"),
        ({"url": "https://hooks.example.com/x"}, "name", "required"),
    ],
)
def test_a_bad_webhook_is_a_400_naming_the_field(admin, body, field, said):
    response = admin.post("/api/v1/webhooks", body, format="json")

    assert response.status_code == 400, response.content
    message = response.json()["error"]["message"]
    assert message.startswith(f"{field}:") and said in message, message


def test_another_projects_webhook_is_not_found(alice, carol, admin, loopback_allowed):
    other = admin_of(carol)
    hook = other.post("/api/v1/webhooks", {"name": "NOTIFY", "url": HOOK_URL}, format="json").json()

    for method in ("get", "patch", "delete"):
        response = getattr(admin, method)(f"/api/v1/webhooks/{hook['id']}", {}, format="json")
        assert response.status_code == 404, method
    assert other.get(f"/api/v1/webhooks/{hook['id']}").status_code == 200


def _admin_operations(schema):
    for method, path, operation in operations(schema):
        if operation["operationId"].startswith("admin_"):
            yield method, path, operation


def test_an_agent_key_gets_403_on_every_admin_operation(alice, admin, loopback_allowed):
    schema = APIClient().get("/api/schema/", {"format": "json"}).json()
    hook = admin.post("/api/v1/webhooks", {"name": "NOTIFY", "url": HOOK_URL}, format="json").json()
    audited = AuditEvent.objects.count()
    checked = []

    for method, path, operation in _admin_operations(schema):
        body = example_body(schema, operation)
        url = fill_path(path, {"webhook_id": hook["id"]})
        if method == "get" and path.startswith("/api/v1/config/"):
            url += "?level=project"
        response = getattr(alice.client, method)(url, body, format="json")
        assert response.status_code == 403, f"{method} {path} → {response.status_code}"
        assert response.json()["error"]["code"] == "permission_denied"
        assert "project-admin API key" in response.json()["error"]["message"]
        assert "403" in operation["responses"], f"{method} {path} documents no 403"
        checked.append(f"{method} {path}")

    assert len(checked) == 11, checked
    assert AuditEvent.objects.count() == audited
    assert alice.get("/api/v1/config").status_code == 200  # its own settings stay readable


def test_create_agent_admin_prints_a_key_that_may_change_settings(db):
    out = io.StringIO()
    call_command("create_agent", "--project", "acme", "--agent", "ops", "--admin", stdout=out)
    plain = io.StringIO()
    call_command("create_agent", "--project", "acme", "--agent", "ops", stdout=plain)

    body = {"level": "project", "version": 0, "values": {"notes_top_k": 1}}
    admin, agent = APIClient(), APIClient()
    admin.credentials(HTTP_AUTHORIZATION=f"Bearer {out.getvalue().splitlines()[-1]}")
    agent.credentials(HTTP_AUTHORIZATION=f"Bearer {plain.getvalue().splitlines()[-1]}")
    assert "Project-admin API key" in out.getvalue()
    assert agent.patch("/api/v1/config", body, format="json").status_code == 403
    assert admin.patch("/api/v1/config", body, format="json").status_code == 200


def test_the_consoles_key_page_issues_a_project_admin_key(alice):
    from django.contrib.auth.models import User
    from django.test import Client

    operator = Client()
    operator.force_login(User.objects.create_superuser("root", password="pw"))

    answer = operator.post(
        "/console/keys/", {"agent": alice.agent.id, "name": "provisioning", "admin": "on"}
    )

    secret = re.search(r"mc_[a-z0-9]{10}_[\w-]+", answer.content.decode()).group()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert client.get("/api/v1/config/level", {"level": "project"}).status_code == 200
