"""The content security policy: the console runs its own scripts and styles only."""

import re
from pathlib import Path

import pytest
from django.contrib.auth.models import User

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"


def _policy(response) -> dict[str, list[str]]:
    header = response["Content-Security-Policy"]
    return {
        name: values
        for name, *values in (part.split() for part in header.split(";") if part.strip())
    }


@pytest.mark.parametrize("path", ["/console/login/", "/admin/login/"])
def test_pages_carry_a_policy_without_inline_script_or_style(client, db, path):
    policy = _policy(client.get(path))

    assert policy["script-src"] == ["'self'"]
    assert policy["style-src"] == ["'self'"]
    assert policy["object-src"] == ["'none'"]
    assert policy["frame-ancestors"] == ["'none'"]
    assert not any("unsafe" in value for values in policy.values() for value in values)


def test_a_logged_in_console_page_carries_it(client, db):
    client.force_login(User.objects.create_superuser(username="root", password="pw"))
    response = client.get("/console/threads/")

    assert response.status_code == 200
    assert _policy(response)["script-src"] == ["'self'"]


def test_htmx_is_told_not_to_add_inline_styles_or_eval(client, db):
    page = client.get("/console/login/").content.decode()

    assert '"includeIndicatorStyles": false' in page
    assert '"allowEval": false' in page


@pytest.mark.parametrize("template", sorted(TEMPLATES.rglob("*.html")), ids=str)
def test_no_template_has_inline_script_style_or_handlers(template):
    text = template.read_text()

    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", text), "inline <script>"
    assert not re.search(r"\sstyle\s*=", text), "style attribute"
    assert "<style" not in text
    assert not re.search(r"\son[a-z]+\s*=", text), "inline event handler"
    assert "hx-on" not in text
