"""The Django admin: raw tables for staff, with Django's permissions; console roles grant none."""

import pytest
from django.contrib import admin
from django.contrib.auth.models import Group, User
from django.test import Client
from django.urls import reverse

from apps.actions.models import ActionWebhook
from apps.actions.services import action_secret
from apps.jobs.services import job_run_pending
from apps.memconfig.services import config_update
from apps.providers.fake_openai import FakeOpenAIServer


def _user(*roles: str, active: bool = True) -> User:
    user = User.objects.create_user(username="-".join(roles) or "nobody", password="pw")
    user.is_active = active
    user.save()
    user.groups.set(Group.objects.filter(name__in=roles))
    return user


def _client(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def every_table(alice, settings):
    """Put at least one row in every table the admin shows, the way clients make them."""
    thread = alice.new_thread(resource_id="user-1", channel="web", external_id="1")
    doomed = alice.new_thread()
    run = alice.post(f"/api/v1/threads/{thread['id']}/runs", {}).json()
    alice.append(thread["id"], {"role": "user", "content": "hello", "run_id": run["id"]})
    alice.put(f"/api/v1/threads/{thread['id']}/plan", {"version": 0, "goal": "ship"})
    alice.post(f"/api/v1/threads/{thread['id']}/iterations", {"task": "t", "outcome": "failed"})
    alice.post(f"/api/v1/runs/{run['id']}/checkpoints", {"state": {"step": 1}})
    alice.put(f"/api/v1/runs/{run['id']}/snapshot", {"tree": {"root": []}})
    alice.delete(f"/api/v1/threads/{doomed['id']}")  # leaves an audit event
    config_update(agent=alice.agent, changes={"recent_window": 30}, changed_by="ops")
    alice.post("/api/v1/episodic", {"content": "Prefers email", "resource_id": "user-1"})
    alice.post("/api/v1/knowledge-bases", {"slug": "ops"})
    alice.post("/api/v1/knowledge-bases/ops/documents", {"title": "t", "text": "Restart it."})
    job_run_pending()  # chunks the document
    alice.put("/api/v1/resources/user-1/profile", {"version": 0, "content": "Works nights."})
    alice.put(f"/api/v1/threads/{thread['id']}/session-memory", {"version": 0, "objective": "x"})
    long = [{"role": "user", "content": f"step {n} " + "word " * 200} for n in range(12)]
    config_update(
        agent=alice.agent,
        changes={
            "context_strategy": "compaction",
            "compaction_budget_tokens": 1000,
            "recent_window": 2,
        },
        changed_by="ops",
    )
    alice.append(alice.new_thread()["id"], *long)
    job_run_pending()  # a compaction summary
    with FakeOpenAIServer() as model:  # a model that fails: the failure is recorded
        settings.OPENAI_BASE_URL, settings.OPENAI_API_KEY = model.base_url, "test"
        model.fail_next(100, status=400)
        config_update(
            agent=alice.agent,
            changes={"context_strategy": "observational", "observer_message_tokens": 1000},
            changed_by="ops",
        )
        alice.append(alice.new_thread()["id"], *long)
        job_run_pending()  # observations, by the rules, after the model's failure
    # Login throttling's tables: a failed login (a success would clear its attempts), and a
    # successful one.
    User.objects.create_user(username="clerk", password="right password")
    login = reverse("console:login")
    Client().post(login, {"username": "stranger", "password": "wrong password"})
    Client().post(login, {"username": "clerk", "password": "right password"})
    project = alice.agent.project
    ActionWebhook.objects.create(project=project, name="NOTIFY", url="https://hooks.example.com")
    action_secret(project_id=project.id)
    alice.append(thread["id"], {"role": "assistant", "content": "[[NOTIFY: ops]]"})


@pytest.mark.parametrize(
    "model", list(admin.site._registry), ids=lambda model: model._meta.label_lower
)
def test_every_registered_table_lists_and_opens_a_row_for_a_superuser(every_table, model):
    root = _client(User.objects.create_superuser(username="root", password="pw"))
    row = model._default_manager.first()
    assert row is not None, f"every_table makes no {model._meta.label} row"
    meta = model._meta

    listed = root.get(reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist"))
    searched = root.get(reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist"), {"q": "a"})
    opened = root.get(reverse(f"admin:{meta.app_label}_{meta.model_name}_change", args=[row.pk]))

    assert listed.status_code == 200
    assert searched.status_code == 200
    assert opened.status_code == 200


def test_the_admin_shows_no_vectors(every_table):
    for model_admin in admin.site._registry.values():
        assert not any("vector" in str(name) for name in model_admin.get_list_display(None))


def test_a_console_admin_who_is_not_staff_is_sent_to_the_admin_login(db):
    client = _client(_user("admin"))

    for path in ("/admin/", "/admin/memconfig/", "/admin/auth/user/", "/admin/auth/user/add/"):
        response = client.get(path)
        assert response.status_code == 302, path
        assert response.url == f"/admin/login/?next={path}"


def test_the_config_version_history_is_visible_and_read_only(every_table):
    client = _client(User.objects.create_superuser(username="root", password="pw"))

    history = client.get("/admin/memconfig/memoryconfigversion/")
    add = client.get("/admin/memconfig/memoryconfigversion/add/")

    assert history.status_code == 200
    assert "ops" in history.content.decode()
    assert add.status_code == 403


@pytest.mark.parametrize("path", ["/admin/", "/admin/memconfig/", "/admin/auth/user/"])
def test_an_operator_is_sent_to_the_admin_login(db, path):
    response = _client(_user("operator")).get(path)

    assert response.status_code == 302
    assert response.url == f"/admin/login/?next={path}"


def test_only_staff_sign_in_on_the_admin_login_page(db):
    _user("admin")
    staff = _user("operator")
    staff.is_staff = True
    staff.save()

    admin_login = Client().post(
        "/admin/login/?next=/admin/", {"username": "admin", "password": "pw"}
    )
    staff_login = Client().post(
        "/admin/login/?next=/admin/", {"username": "operator", "password": "pw"}
    )

    assert admin_login.status_code == 200
    assert "staff account" in admin_login.content.decode()
    assert staff_login.status_code == 302
    assert staff_login.url == "/admin/"


@pytest.mark.parametrize(
    "roles, staff",
    [(("admin",), False), (("admin",), True), (("operator", "curator", "moderator"), True)],
)
def test_console_roles_grant_no_django_permission(db, roles, staff):
    user = _user(*roles)
    user.is_staff = staff
    user.save()

    assert not user.has_perm("auth.change_user")
    assert not user.has_perm("threads.delete_message")
    assert not user.has_module_perms("memconfig")
