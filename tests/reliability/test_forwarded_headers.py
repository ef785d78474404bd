"""X-Forwarded-For and X-Forwarded-Proto are believed only from the configured proxies.

With BEHIND_TLS_PROXY on, any caller that reached the port could write them: twelve wrong
passwords from twelve made-up addresses never locked the account, and X-Forwarded-Proto: https
skipped the HTTPS redirect.
"""

import pytest
from django.contrib.auth.models import User
from django.test import Client, RequestFactory
from django.urls import reverse

from apps.core.client_ip import client_ip

PASSWORD = "correct horse battery"
PROXY = "10.0.0.5"
CALLER = "203.0.113.9"


@pytest.fixture
def behind_proxy(settings):
    settings.BEHIND_TLS_PROXY = True
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    settings.TRUSTED_PROXIES = [PROXY, "10.0.1.0/24"]


@pytest.fixture
def operator(db):
    return User.objects.create_user(username="ops", password=PASSWORD)


def _login(password: str, *, sender: str, forwarded: str | None = None):
    headers = {"HTTP_X_FORWARDED_FOR": forwarded} if forwarded else {}
    return Client(REMOTE_ADDR=sender, **headers).post(
        reverse("console:login"), {"username": "ops", "password": password}
    )


def test_a_caller_cannot_evade_the_lockout_with_made_up_forwarded_addresses(
    operator, behind_proxy, settings
):
    answers = [
        _login("wrong", sender=CALLER, forwarded=f"198.51.100.{n}").status_code for n in range(12)
    ]

    limit = settings.AXES_FAILURE_LIMIT
    assert answers[: limit - 1] == [200] * (limit - 1)
    assert set(answers[limit - 1 :]) == {429}
    assert _login(PASSWORD, sender=CALLER, forwarded="198.51.100.99").status_code == 429


def test_through_the_proxy_each_caller_is_counted_on_its_own(operator, behind_proxy, settings):
    for _ in range(settings.AXES_FAILURE_LIMIT):
        _login("wrong", sender=PROXY, forwarded=f"made-up, {CALLER}")

    assert _login(PASSWORD, sender=PROXY, forwarded=CALLER).status_code == 429
    assert _login(PASSWORD, sender=PROXY, forwarded="198.51.100.4").status_code == 302


@pytest.mark.parametrize(
    "sender, forwarded, caller",
    [
        (CALLER, "198.51.100.1", CALLER),  # not a proxy: its header is ignored
        (PROXY, "198.51.100.1", "198.51.100.1"),
        (PROXY, "1.2.3.4, 198.51.100.1", "198.51.100.1"),  # the proxy appended the last one
        (PROXY, "1.2.3.4, 198.51.100.1, 10.0.1.7", "198.51.100.1"),  # two trusted proxies
        (PROXY, "", PROXY),
        ("::ffff:10.0.0.5", "198.51.100.1", "198.51.100.1"),
    ],
)
def test_it_reads_the_caller_from_the_right_through_trusted_proxies_only(
    behind_proxy, sender, forwarded, caller
):
    request = RequestFactory().get("/", REMOTE_ADDR=sender, HTTP_X_FORWARDED_FOR=forwarded)

    assert client_ip(request) == caller


def test_without_the_proxy_setting_no_forwarded_header_is_believed(settings):
    settings.BEHIND_TLS_PROXY = False
    settings.TRUSTED_PROXIES = [PROXY]
    request = RequestFactory().get("/", REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR="198.51.100.1")

    assert client_ip(request) == PROXY


def test_only_a_trusted_proxy_can_skip_the_https_redirect(db, behind_proxy, settings):
    settings.SECURE_SSL_REDIRECT = True
    login = reverse("console:login")

    direct = Client(REMOTE_ADDR=CALLER).get(login, HTTP_X_FORWARDED_PROTO="https")
    proxied = Client(REMOTE_ADDR=PROXY).get(login, HTTP_X_FORWARDED_PROTO="https")

    assert direct.status_code == 301 and direct["Location"].startswith("https://")
    assert proxied.status_code == 200
