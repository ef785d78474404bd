"""Action webhooks in the console: operators list, add, change and delete them, rotate secrets."""

import pytest

from apps.actions.models import ActionSecret, ActionWebhook
from apps.audit.models import AuditEvent

PAGE = "/console/webhooks/"


@pytest.fixture
def operator(as_role):
    return as_role("operator", username="olga")


@pytest.fixture
def loopback_allowed(settings):
    settings.OUTBOUND_ALLOWED_NETWORKS = ["127.0.0.1/32"]


def add(client, project, name="NOTIFY", url="http://127.0.0.1:9/hook"):
    return client.post(PAGE, {"project": project.id, "name": name, "url": url, "active": "on"})


def test_an_operator_adds_a_webhook_and_its_project_gets_a_secret(
    operator, alice, loopback_allowed
):
    project = alice.agent.project

    added = add(operator, project)

    assert added.status_code == 302
    webhook = ActionWebhook.objects.get()
    assert (webhook.project, webhook.name, webhook.url, webhook.active) == (
        project,
        "NOTIFY",
        "http://127.0.0.1:9/hook",
        True,
    )
    secret = ActionSecret.objects.get(project=project).secret
    page = operator.get(added["Location"]).content.decode()
    assert "[[NOTIFY: …]]" in page and "http://127.0.0.1:9/hook" in page
    assert secret in page  # shown for the chosen project, to set up the receiver
    event = AuditEvent.objects.get(action="action_webhook.create")
    assert event.actor == "user:olga" and event.project_id == project.id
    assert event.after == {"name": "NOTIFY", "url": "http://127.0.0.1:9/hook", "active": True}


@pytest.mark.parametrize(
    "url, says",
    [
        ("http://127.0.0.1:9/hook", "loopback"),  # not allowed without OUTBOUND_ALLOWED_NETWORKS
        ("http://10.0.0.8/hook", "private"),
        ("http://169.254.169.254/latest", "link-local"),
        ("file:///etc/passwd", "only http and https"),
        ("https://user:pw@127.0.0.1/x", "user name or password"),
    ],
)
def test_an_address_the_outbound_guard_refuses_is_a_form_error(operator, alice, url, says):
    refused = add(operator, alice.agent.project, url=url)

    assert refused.status_code == 200
    assert says in refused.content.decode()
    assert not ActionWebhook.objects.exists()
    assert not AuditEvent.objects.filter(object_type="action_webhook").exists()


def test_a_bad_name_or_a_second_webhook_for_a_name_is_a_form_error(
    operator, alice, loopback_allowed
):
    project = alice.agent.project
    add(operator, project)

    lower = add(operator, project, name="notify").content.decode()
    memory = add(operator, project, name="MEMORY").content.decode()
    twice = add(operator, project).content.decode()

    assert "Upper case letters" in lower
    assert "stores a memory entry" in memory
    assert "already exists" in twice
    assert ActionWebhook.objects.count() == 1


def test_an_operator_changes_a_webhook_in_its_project(operator, alice, carol, loopback_allowed):
    add(operator, alice.agent.project)
    webhook = ActionWebhook.objects.get()
    url = f"{PAGE}{webhook.id}/"

    refused = operator.post(url, {"name": "NOTIFY", "url": "http://10.1.2.3/x"})
    saved = operator.post(
        url, {"project": carol.agent.project.id, "name": "PAGE", "url": "http://127.0.0.1:8/p"}
    )

    assert refused.status_code == 200 and "private" in refused.content.decode()
    assert saved.status_code == 302
    webhook.refresh_from_db()
    assert (webhook.project, webhook.name, webhook.url, webhook.active) == (
        alice.agent.project,  # the project field is not editable
        "PAGE",
        "http://127.0.0.1:8/p",
        False,  # an unticked box turns it off
    )
    event = AuditEvent.objects.get(action="action_webhook.update")
    assert event.before["name"] == "NOTIFY" and event.after["name"] == "PAGE"


def test_an_operator_deletes_a_webhook(operator, alice, loopback_allowed):
    add(operator, alice.agent.project)
    webhook = ActionWebhook.objects.get()

    assert operator.get(f"{PAGE}{webhook.id}/delete/").status_code == 405
    deleted = operator.post(f"{PAGE}{webhook.id}/delete/")

    assert deleted.status_code == 302
    assert not ActionWebhook.objects.exists()
    assert AuditEvent.objects.get(action="action_webhook.delete").before["name"] == "NOTIFY"
    assert operator.post(f"{PAGE}{webhook.id}/delete/").status_code == 404


def test_rotating_the_secret_replaces_it_and_audits_without_it(operator, alice, loopback_allowed):
    project = alice.agent.project
    add(operator, project)
    old = ActionSecret.objects.get(project=project).secret

    rotated = operator.post(f"{PAGE}secret/{project.id}/rotate/")

    new = ActionSecret.objects.get(project=project).secret
    assert rotated.status_code == 302 and new != old
    page = operator.get(f"{PAGE}?project={project.id}").content.decode()
    assert new in page and old not in page
    event = AuditEvent.objects.get(action="action_secret.rotate")
    assert event.project_id == project.id
    assert new not in str(event.before) + str(event.after) + event.summary


def test_the_list_shows_one_projects_webhooks_when_chosen(operator, alice, carol):
    for actor, name in ((alice, "NOTIFY"), (carol, "PAGE")):
        ActionWebhook.objects.create(
            project=actor.agent.project, name=name, url="https://hooks.example.com/x"
        )

    every = operator.get(PAGE).content.decode()
    one = operator.get(f"{PAGE}?project={carol.agent.project.id}").content.decode()

    assert "[[NOTIFY: …]]" in every and "[[PAGE: …]]" in every
    assert "[[PAGE: …]]" in one and "[[NOTIFY: …]]" not in one


@pytest.mark.parametrize("role", ["curator", "moderator"])
def test_other_roles_can_neither_see_nor_change_webhooks(as_role, alice, role):
    client = as_role(role)
    webhook = ActionWebhook.objects.create(
        project=alice.agent.project, name="NOTIFY", url="https://hooks.example.com/x"
    )

    assert client.get(PAGE).status_code == 403
    assert add(client, alice.agent.project, name="PAGE").status_code == 403
    assert client.post(f"{PAGE}{webhook.id}/delete/").status_code == 403
    assert client.post(f"{PAGE}secret/{alice.agent.project.id}/rotate/").status_code == 403
    assert ActionWebhook.objects.count() == 1
