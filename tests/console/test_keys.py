"""API keys in the console: list and filter, create (secret shown once), revoke."""

import pytest
from rest_framework.test import APIClient

from apps.audit.models import AuditEvent
from apps.tenancy.models import ApiKey
from apps.tenancy.services import api_key_issue, api_key_revoke

CREATE_HTMX = {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "key-create"}
LIST_HTMX = {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "key-list"}


@pytest.fixture
def admin(as_role):
    return as_role("admin", username="ana")


def _create(client, agent, name="ci", **extra):
    return client.post("/console/keys/", {"agent": agent.id, "name": name}, **extra)


def _bearer(secret: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return client


def test_it_lists_every_key_by_prefix_with_agent_and_status(admin, alice, carol):
    api_key_revoke(api_key=ApiKey.objects.get(agent=carol.agent))

    body = admin.get("/console/keys/").content.decode()

    for actor in (alice, carol):
        prefix = actor.key.split("_")[1]
        assert f"mc_{prefix}_…" in body
        assert actor.key not in body
    assert "acme / alice" in body and "globex / carol" in body
    assert "badge revoked" in body and "badge ok" in body


def test_it_shows_when_a_key_was_last_used(admin, alice):
    assert "never" in admin.get("/console/keys/").content.decode()

    alice.get("/api/v1/config")

    assert "never" not in admin.get("/console/keys/").content.decode()


@pytest.mark.parametrize(
    "query, expected",
    [
        ("project={acme}", {"alice", "bob"}),
        ("agent={carol}", {"carol"}),
        ("status=revoked", {"bob"}),
        ("status=active&project={acme}", {"alice"}),
    ],
)
def test_filters_narrow_the_list(admin, alice, bob, carol, query, expected):
    api_key_revoke(api_key=ApiKey.objects.get(agent=bob.agent))
    ids = {"acme": alice.agent.project.id, "carol": carol.agent.id}

    response = admin.get(f"/console/keys/?{query.format(**ids)}", **LIST_HTMX)

    assert {key.agent.slug for key in response.context["page"]} == expected
    assert response.content.decode().startswith('<section id="key-list"')


def test_the_list_paginates(admin, alice):
    for number in range(30):
        api_key_issue(agent=alice.agent, name=f"key {number}")

    first = admin.get("/console/keys/")
    second = admin.get("/console/keys/?page=2")

    assert len(first.context["page"]) == 25
    assert len(second.context["page"]) == 6
    assert "page=2" in first.content.decode()


def test_creating_a_key_shows_its_secret_once_and_the_key_works(admin, alice):
    response = _create(admin, alice.agent, name="deploy bot")

    secret = response.context["issued"].secret
    body = response.content.decode()
    assert response.status_code == 200
    assert secret in body
    assert "it will not be shown again" in body
    assert "no-store" in response["Cache-Control"]
    assert secret not in admin.get("/console/keys/").content.decode()
    assert _bearer(secret).get("/api/v1/config").status_code == 200
    key = ApiKey.objects.get(name="deploy bot")
    assert secret.startswith(f"mc_{key.prefix}_")
    assert secret not in (key.key_hash, key.prefix, key.name)


def test_an_htmx_create_returns_the_create_fragment_and_asks_the_list_to_reload(admin, alice):
    response = _create(admin, alice.agent, **CREATE_HTMX)

    body = response.content.decode()
    assert body.startswith('<section id="key-create"')
    assert "<html" not in body
    assert response.context["issued"].secret in body
    assert response["HX-Trigger"] == "keys-changed"
    assert "no-store" in response["Cache-Control"]
    assert 'hx-trigger="keys-changed from:body"' in admin.get("/console/keys/").content.decode()


@pytest.mark.parametrize(
    "data, message",
    [
        ({"name": "x"}, "Choose the agent the key is for."),
        ({"agent": "00000000-0000-0000-0000-000000000000"}, "That agent does not exist any more"),
        ({"agent": "AGENT", "name": "n" * 101}, "at most 100 characters"),
    ],
)
def test_bad_create_input_is_reported_and_creates_nothing(admin, alice, data, message):
    data = {k: alice.agent.id if v == "AGENT" else v for k, v in data.items()}

    response = admin.post("/console/keys/", data, **CREATE_HTMX)

    assert response.status_code == 200
    assert message in response.content.decode()
    assert "HX-Trigger" not in response
    assert ApiKey.objects.count() == 1  # alice's own


def test_revoking_a_key_makes_the_api_answer_401(admin, alice):
    secret = _create(admin, alice.agent).context["issued"].secret
    key = ApiKey.objects.get(name="ci")

    response = admin.post(f"/console/keys/{key.id}/revoke/?page=1", **LIST_HTMX)

    body = response.content.decode()
    assert body.startswith('<section id="key-list"')
    assert "badge revoked" in body
    assert f"Revoked mc_{key.prefix}_…" in body
    assert _bearer(secret).get("/api/v1/config").status_code == 401
    assert alice.get("/api/v1/config").status_code == 200  # her other key still works


def test_the_revoke_answer_keeps_the_filters(admin, alice, carol):
    key = ApiKey.objects.get(agent=alice.agent)

    response = admin.post(
        f"/console/keys/{key.id}/revoke/?project={alice.agent.project.id}&page=1", **LIST_HTMX
    )

    assert {k.agent.slug for k in response.context["page"]} == {"alice"}


def test_a_plain_revoke_redirects_back_to_the_list(admin, alice):
    key = ApiKey.objects.get(agent=alice.agent)

    response = admin.post(f"/console/keys/{key.id}/revoke/?status=active")

    assert response.status_code == 302
    assert response["Location"] == "/console/keys/?status=active"
    assert ApiKey.objects.get(pk=key.pk).revoked_at is not None


def test_revoking_twice_says_it_was_already_revoked(admin, alice):
    key = ApiKey.objects.get(agent=alice.agent)
    admin.post(f"/console/keys/{key.id}/revoke/", **LIST_HTMX)

    response = admin.post(f"/console/keys/{key.id}/revoke/", **LIST_HTMX)

    assert "was already revoked" in response.content.decode()
    assert AuditEvent.objects.filter(action="key.revoke").count() == 1


def test_revoking_an_unknown_key_is_404(admin):
    response = admin.post("/console/keys/00000000-0000-0000-0000-000000000000/revoke/")

    assert response.status_code == 404


def test_revoke_asks_for_confirmation(admin, alice):
    body = admin.get("/console/keys/").content.decode()

    assert 'hx-confirm="Revoke mc_' in body


def test_create_and_revoke_are_in_the_audit_log_with_the_console_user(admin, alice):
    _create(admin, alice.agent, name="audited")
    key = ApiKey.objects.get(name="audited")
    admin.post(f"/console/keys/{key.id}/revoke/", **LIST_HTMX)

    events = {e.action: e for e in AuditEvent.objects.filter(object_id=str(key.id))}
    assert set(events) == {"key.create", "key.revoke"}
    assert {e.actor for e in events.values()} == {"user:ana"}
    assert events["key.revoke"].before["revoked_at"] is None
    assert events["key.revoke"].after["revoked_at"] is not None
    body = admin.get("/console/audit/").content.decode()
    assert "key.create" in body and "key.revoke" in body
    assert f"mc_{key.prefix}_… of acme/alice" in body


def test_stored_text_renders_escaped(admin, alice):
    _create(admin, alice.agent, name="<script>alert(1)</script>")

    body = admin.get("/console/keys/").content.decode()

    assert "<script>alert(1)" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body


def test_without_agents_it_says_how_to_create_one(admin):
    body = admin.get("/console/keys/").content.decode()

    assert "manage.py create_agent" in body
    assert "No API keys match" in body


@pytest.mark.parametrize("role", ["operator", "curator", "moderator"])
def test_other_roles_get_403(as_role, alice, role):
    client = as_role(role)
    key = ApiKey.objects.get(agent=alice.agent)

    assert client.get("/console/keys/").status_code == 403
    assert _create(client, alice.agent).status_code == 403
    assert client.post(f"/console/keys/{key.id}/revoke/").status_code == 403
    assert ApiKey.objects.get(pk=key.pk).revoked_at is None
    assert ApiKey.objects.count() == 1


def test_posts_need_the_csrf_token(csrf_client, alice):
    client = csrf_client()
    key = ApiKey.objects.get(agent=alice.agent)

    assert _create(client, alice.agent).status_code == 403
    assert client.post(f"/console/keys/{key.id}/revoke/").status_code == 403
    assert ApiKey.objects.get(pk=key.pk).revoked_at is None
    assert ApiKey.objects.count() == 1
