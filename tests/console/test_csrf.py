"""Every console URL refuses a POST that lacks the CSRF token, whatever its method handling.

The URLs come from the console's URLconf, so a new view is covered as soon as it is routed.
"""

import pytest
from django.test import Client

from tests.console.urlconf import console_url, pattern_names

ALL = pattern_names(public=True)


@pytest.fixture
def browser_session(csrf_client):
    return csrf_client()


def _token(client: Client) -> str:
    client.get("/console/login/")
    return client.cookies["csrftoken"].value


@pytest.mark.parametrize("name", ALL)
def test_a_post_without_the_csrf_token_is_refused(browser_session, console_objects, name):
    url = console_url(name, console_objects)

    refused = browser_session.post(url, {"q": "x"})
    refused_htmx = browser_session.post(url, {"q": "x"}, HTTP_HX_REQUEST="true")

    assert refused.status_code == 403, url
    assert b"CSRF verification failed" in refused.content, url
    assert refused_htmx.status_code == 403, url


@pytest.mark.parametrize("name", ALL)
def test_the_same_post_with_the_token_gets_past_the_csrf_check(
    browser_session, console_objects, name
):
    """Shows the 403 above comes from the CSRF check, not from the view."""
    url = console_url(name, console_objects)

    response = browser_session.post(url, {"q": "x"}, HTTP_X_CSRFTOKEN=_token(browser_session))

    assert response.status_code != 403, (url, response.content[:300])
