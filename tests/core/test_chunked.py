"""A request body without Content-Length is refused with 411, never stored as an empty one.

Django reads exactly CONTENT_LENGTH bytes of a body, so a chunked body used to read as empty:
POST /api/v1/threads answered 201 with every field left at its default.
"""

import http.client
import json
import sys

import pytest
from django.conf import settings
from django.db import connection

from apps.threads.models import Thread
from tests.core.servers import free_port, server_env, start, stop, wait_until_serving


def database_url() -> str:
    """The URL of the test database, for a server in another process to share it."""
    config = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{config['NAME']}"
    user = config["USER"] + (f":{config['PASSWORD']}" if config["PASSWORD"] else "")
    return f"postgres://{user}@{config['HOST']}:{config['PORT'] or 5432}/{config['NAME']}"


@pytest.fixture
def gunicorn(transactional_db, tmp_path):
    """gunicorn serving the application from the test database; yield its host and port."""
    port = free_port()
    env = server_env(tmp_path, DATABASE_URL=database_url(), SECRET_KEY=settings.SECRET_KEY)
    log = tmp_path / "gunicorn.log"
    args = [sys.executable, "-m", "gunicorn", "memory_console.wsgi", "--no-control-socket"]
    process = start([*args, "--bind", f"127.0.0.1:{port}", "--workers", "1"], env, log)
    try:
        wait_until_serving(f"http://127.0.0.1:{port}/healthz", process, log)
        yield "127.0.0.1", port
    finally:
        stop(process)


def post_chunked(host: str, port: int, path: str, body: bytes, headers: dict) -> tuple[int, dict]:
    connection = http.client.HTTPConnection(host, port, timeout=30)
    try:
        # An iterator has no length, so http.client sends it with Transfer-Encoding: chunked.
        connection.request("POST", path, body=iter([body[:5], body[5:]]), headers=headers)
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def test_gunicorn_answers_a_chunked_api_body_with_411_and_stores_nothing(gunicorn, alice):
    headers = {"Authorization": f"Bearer {alice.key}", "Content-Type": "application/json"}
    body = json.dumps({"title": "from a chunked body", "channel": "web"}).encode()

    status, answer = post_chunked(*gunicorn, "/api/v1/threads", body, headers)

    assert status == 411
    assert answer["error"]["code"] == "length_required"
    assert "Content-Length" in answer["error"]["message"]
    assert not Thread.objects.exists()


def test_it_refuses_a_chunked_api_body_naming_the_header_to_send(alice):
    response = alice.client.post(
        "/api/v1/threads",
        json.dumps({"title": "t"}),
        content_type="application/json",
        HTTP_TRANSFER_ENCODING="chunked",
    )

    assert response.status_code == 411
    assert response.json()["error"] == {
        "code": "length_required",
        "message": "Transfer-Encoding is not supported: send the request body with a "
        "Content-Length header instead.",
        "details": {"header": "Transfer-Encoding"},
    }
    assert not Thread.objects.exists()


def test_it_refuses_a_chunked_console_form_with_a_plain_page(client, db):
    response = client.post(
        "/console/login/", {"username": "a", "password": "b"}, HTTP_TRANSFER_ENCODING="chunked"
    )

    assert response.status_code == 411
    assert response["Content-Type"].startswith("text/plain")
    assert b"Content-Length" in response.content


def test_a_body_with_content_length_is_still_read(alice):
    response = alice.post("/api/v1/threads", {"title": "kept"})

    assert response.status_code == 201
    assert response.json()["title"] == "kept"
