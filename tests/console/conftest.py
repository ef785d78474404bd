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
