"""Every console page checks its role: the login page without a session, 403 without the role."""

import pytest
from django.urls import URLPattern, get_resolver

from apps.console.roles import ROLES

CONSOLE_PUBLIC = {"login", "logout"}


def _console_pages():
    """(name, required roles) of every console page that takes no URL argument."""
    resolver = get_resolver().url_patterns
    console = next(p for p in resolver if getattr(p, "namespace", None) == "console")
    for pattern in console.url_patterns:
        if not isinstance(pattern, URLPattern) or pattern.name in CONSOLE_PUBLIC:
            continue
        roles = getattr(pattern.callback, "required_roles", None)
        assert roles, f"console view {pattern.name} has no @role_required"
        if not pattern.pattern.regex.groupindex:
            yield pattern.name, set(roles)


PAGES = sorted(_console_pages())


@pytest.mark.parametrize("name, roles", PAGES)
def test_anonymous_users_are_sent_to_the_login_page(client, db, name, roles):
    response = client.get(f"/console/{_path(name)}")

    assert response.status_code == 302
    assert response["Location"].startswith("/console/login/")


@pytest.mark.parametrize("name, roles", PAGES)
def test_each_role_opens_its_pages_and_gets_403_elsewhere(as_role, name, roles):
    for role in ROLES:
        response = as_role(role, username=f"{role}-{name}").get(f"/console/{_path(name)}")

        assert response.status_code == (200 if role in roles else 403), (role, name)


def test_a_user_without_any_role_gets_403(as_role):
    assert as_role().get("/console/").status_code == 403


def _path(name: str) -> str:
    from django.urls import reverse

    return reverse(f"console:{name}").removeprefix("/console/")
