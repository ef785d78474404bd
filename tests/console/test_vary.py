"""Console answers vary with HX-Request, so a cache never serves a fragment as a page."""

import pytest
from django.utils.cache import has_vary_header

from tests.console.urlconf import console_url, pattern_names

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.mark.parametrize("name", pattern_names(public=True))
@pytest.mark.parametrize("htmx", [False, True], ids=["page", "htmx"])
def test_every_console_answer_varies_on_hx_request(as_role, console_objects, name, htmx):
    client = as_role("operator", "curator", "moderator", "admin")
    url = console_url(name, console_objects)

    response = client.get(url, **(HTMX if htmx else {}))

    assert has_vary_header(response, "HX-Request"), (url, response.status_code)


def test_redirects_and_refusals_vary_too(client, as_role, db):
    anonymous = client.get("/console/threads/")
    refused = as_role("curator").get("/console/threads/")
    redirected = as_role("operator").post("/console/evaluation/", {"project": ""}, **HTMX)

    assert anonymous.status_code == 302 and has_vary_header(anonymous, "HX-Request")
    assert refused.status_code == 403 and has_vary_header(refused, "HX-Request")
    assert has_vary_header(redirected, "HX-Request")


def test_the_api_does_not_vary_on_hx_request(alice):
    response = alice.get("/api/v1/threads")

    assert response.status_code == 200
    assert not has_vary_header(response, "HX-Request")
