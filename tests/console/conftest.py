"""Console users by role: `as_role("curator")` is a test client logged in with that role."""

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client


@pytest.fixture
def as_role(db):
    def login(*roles: str, username: str | None = None) -> Client:
        user = User.objects.create_user(
            username=username or "-".join(roles) or "nobody", password="pw"
        )
        user.groups.set(Group.objects.filter(name__in=roles))
        client = Client()
        client.force_login(user)
        return client

    return login


@pytest.fixture
def csrf_client(db):
    """A client that enforces CSRF like a browser would, logged in as a superuser."""

    def login() -> Client:
        user = User.objects.create_superuser(username="root", password="pw")
        client = Client(enforce_csrf_checks=True)
        client.force_login(user)
        return client

    return login


@pytest.fixture
def console_objects(alice):
    """One real object for each URL argument of the console, keyed by the argument's name."""
    from apps.actions.models import ActionWebhook
    from apps.knowledge.services import document_from_text, knowledge_base_create
    from apps.memconfig.services import config_update
    from apps.tenancy.selectors import api_key_list

    thread = alice.new_thread(title="t", resource_id="cust-1")
    alice.append(thread["id"], {"role": "user", "content": "The VPN drops at 5pm."})
    given = alice.post(f"/api/v1/threads/{thread['id']}/context", {})
    assert given.status_code == 200, given.content
    entry = alice.post(
        "/api/v1/episodic",
        {"content": "VPN drops daily at 5pm.", "resource_id": "cust-1", "source": "api"},
    )
    assert entry.status_code == 201, entry.content
    kb = knowledge_base_create(project=alice.agent.project, slug="ops", name="Ops")
    document = document_from_text(kb=kb, title="Runbook", text="Restart it.", actor="test")
    note = alice.post("/api/v1/notes", {"path": "ops/deploy.md", "content": "Deploy [[x]]."})
    assert note.status_code == 201, note.content
    config_update(project=alice.agent.project, changes={"recent_window": 30}, changed_by="test")
    webhook = ActionWebhook.objects.create(
        project=alice.agent.project, name="NOTIFY", url="https://hooks.example.com/notify"
    )
    run = alice.post(f"/api/v1/threads/{thread['id']}/runs", {}).json()
    artifact = alice.post(f"/api/v1/runs/{run['id']}/artifacts", {"name": "a.md", "content": "x"})
    assert artifact.status_code == 201, artifact.content
    return {
        "artifact_id": artifact.json()["id"],
        "context_id": given.json()["context_id"],
        "thread_id": thread["id"],
        "kb_id": kb.id,
        "document_id": document.document.id,
        "entry_id": entry.json()["id"],
        "note_id": note.json()["id"],
        "key_id": api_key_list(agent=alice.agent).first().id,
        "webhook_id": webhook.id,
        "project_id": alice.agent.project.id,
        "to_version": 1,
        "user_id": User.objects.create_user(username="someone", password="pw").pk,
    }
