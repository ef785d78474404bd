"""Login throttling (django-axes): wrong passwords for a username from an address lock it out."""

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

PASSWORD = "correct horse battery"


@pytest.fixture
def operator(db):
    return User.objects.create_user(username="ops", password=PASSWORD)


def _login(password: str, *, username="ops", address="203.0.113.7"):
    return Client(REMOTE_ADDR=address).post(
        reverse("console:login"), {"username": username, "password": password}
    )


def test_it_locks_out_after_the_failure_limit_even_the_right_password(operator, settings):
    failures = [_login("wrong").status_code for _ in range(settings.AXES_FAILURE_LIMIT - 1)]
    last = _login("wrong")
    locked = _login(PASSWORD)

    assert failures == [200] * (settings.AXES_FAILURE_LIMIT - 1)  # the form again, with an error
    assert last.status_code == 429
    assert locked.status_code == 429
    assert "Too many failed logins" in locked.content.decode()
    assert "_auth_user_id" not in locked.wsgi_request.session


def test_the_lockout_holds_for_that_username_and_address_only(operator, settings):
    for _ in range(settings.AXES_FAILURE_LIMIT):
        _login("wrong")

    assert _login(PASSWORD, address="198.51.100.4").status_code == 302
    User.objects.create_user(username="curator", password=PASSWORD)
    assert _login(PASSWORD, username="curator").status_code == 302


def test_a_success_before_the_limit_clears_the_failures(operator, settings):
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        _login("wrong")
    assert _login(PASSWORD).status_code == 302

    assert _login("wrong").status_code == 200


def test_the_admin_login_is_throttled_too(operator, settings):
    for _ in range(settings.AXES_FAILURE_LIMIT):
        Client(REMOTE_ADDR="203.0.113.7").post(
            reverse("admin:login"), {"username": "ops", "password": "wrong"}
        )

    assert _login(PASSWORD).status_code == 429


def test_behind_the_proxy_the_address_is_the_one_the_proxy_saw(operator, settings):
    settings.BEHIND_TLS_PROXY = True
    settings.TRUSTED_PROXIES = ["10.1.1.1"]
    spoofed = [f"10.0.0.{n}, 203.0.113.7" for n in range(settings.AXES_FAILURE_LIMIT)]
    for forwarded in spoofed:
        Client(REMOTE_ADDR="10.1.1.1", HTTP_X_FORWARDED_FOR=forwarded).post(
            reverse("console:login"), {"username": "ops", "password": "wrong"}
        )

    again = Client(REMOTE_ADDR="10.1.1.1", HTTP_X_FORWARDED_FOR="10.9.9.9, 203.0.113.7").post(
        reverse("console:login"), {"username": "ops", "password": PASSWORD}
    )
    assert again.status_code == 429
