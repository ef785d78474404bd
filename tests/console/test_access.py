"""Every console page checks its role: the login page without a session, 403 without the role.

The pages come from the console's URLconf; those that take an id get a real object's id.
"""

import logging
import re

import pytest

from apps.console.roles import ADMIN, ROLES
from apps.evaluation.models import EvaluationRun
from tests.console.urlconf import console_url, pattern_names, required_roles

PAGES = sorted((name, required_roles(name)) for name in pattern_names(with_arguments=False))
OBJECT_PAGES = sorted((name, required_roles(name)) for name in pattern_names(with_arguments=True))


def opens(role: str, roles: set[str]) -> bool:
    """Whether a role opens a page needing roles: an admin holds every role."""
    return role in roles or role == ADMIN


@pytest.mark.parametrize("name, roles", PAGES + OBJECT_PAGES)
def test_anonymous_users_are_sent_to_the_login_page(client, console_objects, name, roles):
    url = console_url(name, console_objects)

    for response in (client.get(url), client.post(url, {"q": "x"})):
        assert response.status_code == 302, url
        assert response["Location"].startswith(f"/console/login/?next={url}")


@pytest.mark.parametrize("name, roles", PAGES)
def test_each_role_opens_its_pages_and_gets_403_elsewhere(as_role, name, roles):
    for role in ROLES:
        client = as_role(role, username=f"{role}-{name}")

        response = client.get(console_url(name, {}))

        assert response.status_code == (200 if opens(role, roles) else 403), (role, name)
        if not opens(role, roles):  # forms on these pages post back to them
            assert client.post(console_url(name, {}), {}).status_code == 403, (role, name)


def test_a_role_without_access_cannot_start_an_evaluation(as_role, alice):
    for role in ("curator", "moderator"):
        client = as_role(role, username=f"{role}-eval")
        response = client.post("/console/evaluation/", {"project": str(alice.agent.project.id)})

        assert response.status_code == 403, role
    assert not EvaluationRun.objects.exists()


@pytest.mark.parametrize("name, roles", OBJECT_PAGES)
def test_pages_of_one_object_refuse_roles_without_access(as_role, console_objects, name, roles):
    url = console_url(name, console_objects)
    for role in sorted(set(ROLES) - roles - {ADMIN}):
        client = as_role(role, username=f"{role}-{name}")

        for response in (client.get(url), client.post(url, {"q": "x"})):
            assert response.status_code == 403, (role, name, response.request["REQUEST_METHOD"])
            assert b"This page needs the role" in response.content


@pytest.mark.parametrize("name, roles", OBJECT_PAGES)
def test_pages_of_one_object_let_their_roles_in(as_role, console_objects, name, roles):
    url = console_url(name, console_objects)
    for role in sorted(roles | {ADMIN}):
        response = as_role(role, username=f"{role}-{name}").get(url)

        # 405: the URL only takes POST; the role check came first and let the role through.
        assert response.status_code in (200, 405), (role, name, response.status_code)


def test_object_pages_include_the_ones_that_matter(db):
    names = {name for name, _ in OBJECT_PAGES}

    assert {"thread", "thread-earlier", "thread-later", "thread-search"} <= names
    assert {"knowledge-document", "moderation-entry", "config-rollback"} <= names


def test_a_user_without_any_role_gets_403(as_role):
    assert as_role().get("/console/").status_code == 403


def test_a_refused_page_is_logged_as_one_request_line_without_a_traceback(as_role, caplog):
    caplog.set_level(logging.INFO)
    response = as_role("curator").get("/console/threads/")

    assert response.status_code == 403
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
    lines = [r for r in caplog.records if r.name == "memory_console.requests"]
    assert [(r.levelname, r.status, r.path) for r in lines] == [("INFO", 403, "/console/threads/")]


def test_missing_pages_answer_a_styled_404(as_role):
    response = as_role("operator").get("/console/threads/00000000-0000-0000-0000-000000000000/")

    assert response.status_code == 404
    body = response.content.decode()
    assert '<section class="card narrow" id="not-found">' in body and "css/console.css" in body


def test_the_500_page_is_styled_and_needs_no_request(client):
    from django.test import RequestFactory
    from django.views.defaults import server_error

    body = server_error(RequestFactory().get("/console/x/")).content.decode()

    assert 'id="server-error"' in body and "css/console.css" in body


@pytest.mark.parametrize("role", [role for role in ROLES if role != ADMIN])
def test_no_page_shows_a_role_a_link_it_may_not_open(as_role, console_objects, role):
    client = as_role(role)
    opened, links = [], set()
    for name, _ in PAGES + OBJECT_PAGES:
        url = console_url(name, console_objects)
        response = client.get(url)
        if response.status_code != 200 or not response["Content-Type"].startswith("text/html"):
            continue
        opened.append(name)
        page = response.content.decode()
        links |= {(link, url) for link in re.findall(r'href="(/console/[^"#?]*)', page)}
    refused = sorted((link, on) for link, on in links if client.get(link).status_code == 403)

    assert opened, role
    assert refused == [], refused
