"""One check of every query string: JSON errors under /api/, a plain 400 page elsewhere."""

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client


@pytest.fixture
def operator(db) -> Client:
    user = User.objects.create_user(username="operator", password="pw")
    user.groups.set(Group.objects.filter(name="operator"))
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.parametrize(
    "raw, said",
    [
        ("%00", "contains the NUL character"),
        ("%ED%A0%80", "is not valid UTF-8"),
    ],
)
def test_the_console_jobs_page_refuses_a_kind_it_cannot_use_naming_it(operator, raw, said):
    response = operator.get(f"/console/jobs/?status=failed&kind={raw}")

    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/plain")
    text = response.content.decode()
    assert text.startswith("kind: The query parameter ")
    assert said in text


def test_the_console_jobs_page_still_filters_by_kind(operator):
    response = operator.get("/console/jobs/", {"kind": "knowledge.ingest"})

    assert response.status_code == 200


def test_the_query_string_is_checked_before_authentication(anonymous, db):
    response = anonymous.get("/api/v1/threads?channel=%00")

    assert response.status_code == 400
    assert list(response.json()["error"]["details"]) == ["channel"]
