"""The admin role manages the console, never Django's staff or superuser flags.

A member of the admin role who is not staff cannot open Django's admin, has no model
permission there, and no console form sets is_staff or is_superuser, whatever is posted.
"""

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from apps.audit.models import AuditEvent
from apps.tenancy.models import Agent, Project


@pytest.fixture
def ana(db):
    """A member of the admin role, neither staff nor superuser."""
    user = User.objects.create_user(username="ana", password="correct horse battery")
    user.groups.add(Group.objects.get(name="admin"))
    return user


@pytest.fixture
def ana_client(ana):
    client = Client()
    client.force_login(ana)
    return client


@pytest.fixture
def ben(db):
    return User.objects.create_user(username="ben", password="pw")


@pytest.mark.parametrize(
    "url", ["/admin/", "/admin/auth/user/", "/admin/auth/user/add/", "/admin/auth/group/"]
)
def test_an_admin_role_user_is_sent_away_from_django_s_admin(ana_client, url):
    response = ana_client.get(url)

    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")


def test_the_admin_login_refuses_an_admin_role_user_who_is_not_staff(ana):
    client = Client()
    response = client.post(
        "/admin/login/?next=/admin/",
        {"username": "ana", "password": "correct horse battery", "next": "/admin/"},
    )

    assert response.status_code == 200
    assert "staff account" in response.content.decode()
    assert client.get("/admin/").status_code == 302


def test_the_change_form_with_is_superuser_is_out_of_reach(ana_client, ben):
    response = ana_client.post(
        f"/admin/auth/user/{ben.pk}/change/",
        {"username": "ben", "is_superuser": "on", "is_staff": "on", "is_active": "on"},
    )

    assert response.status_code == 302 and response["Location"].startswith("/admin/login/")
    ben.refresh_from_db()
    assert not ben.is_superuser and not ben.is_staff


def test_the_admin_role_grants_no_django_model_permission(ana):
    assert not ana.has_perm("auth.change_user")
    assert not ana.has_module_perms("auth")


def test_a_staff_member_with_the_admin_role_gets_only_django_s_permissions(ana):
    ana.is_staff = True
    ana.save()
    client = Client()
    client.force_login(ana)

    assert client.get("/admin/").status_code == 200
    assert client.get("/admin/auth/user/").status_code == 403


def test_an_admin_sets_roles_and_posted_flags_are_ignored(ana_client, ben):
    response = ana_client.post(
        f"/console/users/{ben.pk}/roles/",
        {"roles": ["operator", "curator"], "is_superuser": "on", "is_staff": "on"},
        follow=True,
    )

    assert response.status_code == 200
    assert "ben now has the roles: operator, curator." in response.content.decode()
    ben.refresh_from_db()
    assert not ben.is_superuser and not ben.is_staff
    assert set(ben.groups.values_list("name", flat=True)) == {"operator", "curator"}
    event = AuditEvent.objects.get(action="user.roles")
    assert (event.actor, event.before, event.after) == (
        "user:ana",
        {"roles": []},
        {"roles": ["operator", "curator"]},
    )


@pytest.mark.parametrize("role", ["superuser", "staff", "is_superuser"])
def test_a_role_that_is_not_a_console_role_is_refused(ana_client, ben, role):
    response = ana_client.post(f"/console/users/{ben.pk}/roles/", {"roles": [role]}, follow=True)

    assert f"roles: {role} is not a console role." in response.content.decode()
    ben.refresh_from_db()
    assert not ben.is_superuser and not ben.is_staff and not ben.groups.exists()


def test_other_groups_of_a_user_stay_when_roles_change(ana_client, ben):
    other = Group.objects.create(name="billing")
    ben.groups.add(other, Group.objects.get(name="moderator"))

    ana_client.post(f"/console/users/{ben.pk}/roles/", {"roles": ["operator"]})

    assert set(ben.groups.values_list("name", flat=True)) == {"billing", "operator"}


def test_an_admin_cannot_take_the_admin_role_from_themselves(ana_client, ana):
    response = ana_client.post(
        f"/console/users/{ana.pk}/roles/", {"roles": ["operator"]}, follow=True
    )

    assert "You cannot take the admin role from yourself" in response.content.decode()
    assert set(ana.groups.values_list("name", flat=True)) == {"admin"}


def test_the_users_page_shows_flags_but_has_no_input_for_them(ana_client, ben):
    ben.is_staff = True
    ben.save()

    body = ana_client.get("/console/users/").content.decode()

    assert 'id="user-' in body and "staff" in body
    assert 'name="is_superuser"' not in body and 'name="is_staff"' not in body
    assert body.count('name="roles"') == 2 * 4  # two users, four roles each


def test_a_missing_user_answers_404(ana_client):
    assert ana_client.post("/console/users/999999/roles/", {"roles": []}).status_code == 404


def test_the_navigation_links_django_s_admin_for_staff_only(ana_client, ana):
    assert "Django admin" not in ana_client.get("/console/").content.decode()
    ana.is_staff = True
    ana.save()
    assert "Django admin" in ana_client.get("/console/").content.decode()


def test_an_admin_creates_a_project_and_an_agent(ana_client):
    response = ana_client.post("/console/projects/", {"form": "project", "slug": "shop"})
    assert response.status_code == 302
    project = Project.objects.get(slug="shop")

    response = ana_client.post(
        "/console/projects/",
        {"form": "agent", "project": str(project.id), "slug": "support-bot"},
        follow=True,
    )
    assert "Created agent shop/support-bot." in response.content.decode()
    assert Agent.objects.filter(project=project, slug="support-bot").exists()


@pytest.mark.parametrize(
    "data, message",
    [
        ({"form": "project", "slug": "not a slug"}, "Enter a valid"),
        ({"form": "agent", "slug": "bot"}, "This field is required"),
    ],
)
def test_a_bad_project_or_agent_form_answers_400_naming_the_field(ana_client, data, message):
    response = ana_client.post("/console/projects/", data)

    assert response.status_code == 400
    assert message in response.content.decode()


def test_an_existing_project_slug_is_told(ana_client):
    Project.objects.create(slug="shop")

    response = ana_client.post("/console/projects/", {"form": "project", "slug": "shop"})

    assert response.status_code == 400
    assert "A project shop exists already" in response.content.decode()


@pytest.mark.parametrize("role", ["operator", "curator", "moderator"])
def test_other_roles_cannot_create_projects(as_role, role):
    response = as_role(role).post("/console/projects/", {"form": "project", "slug": "shop"})

    assert response.status_code == 403
    assert not Project.objects.filter(slug="shop").exists()
