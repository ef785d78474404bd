"""Project-admin keys: issued by create_agent --admin or the console; agent keys get 403 on
every admin operation of the schema."""

import io
import re

from django.core.management import call_command
from rest_framework.test import APIClient

from apps.audit.models import AuditEvent
from tests.api.conftest import HOOK_URL
from tests.api.openapi import example_body, fill_path, operations


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
