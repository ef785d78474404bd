"""Action webhooks over HTTP with a project-admin key: manage, sign, validate, isolate."""

import hashlib
import hmac

import pytest

from apps.actions.delivery import SIGNATURE_HEADER, TIMESTAMP_HEADER
from apps.actions.models import ActionWebhook
from apps.audit.models import AuditEvent
from apps.jobs.services import job_run_pending
from apps.tenancy.services import api_key_issue
from tests.actions.test_actions import receiver_factory  # noqa: F401  (a fixture)
from tests.api.conftest import HOOK_URL, admin_of
from tests.conftest import make_actor
from tests.processes import send_at_once


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
        body = {} if method == "patch" else None  # a DELETE takes no body
        response = getattr(admin, method)(f"/api/v1/webhooks/{hook['id']}", body, format="json")
        assert response.status_code == 404, method
    assert other.get(f"/api/v1/webhooks/{hook['id']}").status_code == 200


def test_concurrent_creates_of_one_name_store_one_webhook_and_answer_409(
    live_server, transactional_db
):
    alice = make_actor("acme", "alice")
    key = api_key_issue(agent=alice.agent, scope="admin").secret
    body = {"name": "NOTIFY", "url": "https://93.184.216.34/r"}  # a public address: no DNS

    responses = send_at_once(live_server.url, key, [("POST", "/api/v1/webhooks", body)] * 10)

    statuses = sorted(r.status_code for r in responses)
    assert statuses == [201] + [409] * 9, [r.text for r in responses]
    assert {r.json()["error"]["code"] for r in responses if r.status_code == 409} == {"duplicate"}
    assert str(ActionWebhook.objects.get().id) == next(
        r.json()["id"] for r in responses if r.status_code == 201
    )
