"""Static files: the console and the API docs work before collectstatic; after it, production
serves hashed, compressed names cached for ever."""

import re
import sys

import pytest

from tests.core.servers import (
    fetch,
    free_port,
    manage,
    server_env,
    start,
    stop,
    wait_until_serving,
)

PAGES = ["/console/login/", "/api/docs/"]
LINKED = re.compile(r'(?:href|src)="(/static/[^"]+\.(?:css|js))"')
HASHED = re.compile(r"\.[0-9a-f]{12}\.(?:css|js)$")


@pytest.fixture
def serve(tmp_path):
    """Start a server command on a free port with the environment given; yield its base URL."""
    processes = []

    def run(args: list[str], env: dict, port: int) -> str:
        log = tmp_path / f"server-{port}.log"
        processes.append(start(args, env, log))
        base = f"http://127.0.0.1:{port}"
        wait_until_serving(f"{base}/healthz", processes[-1], log)
        return base

    yield run
    for process in processes:
        stop(process)


def static_links(base: str) -> list[str]:
    links = []
    for page in PAGES:
        status, _, body = fetch(base + page)
        assert status == 200, (page, body[:2000])
        links += LINKED.findall(body.decode())
    assert any(link.endswith(".css") for link in links) and any(
        link.endswith(".js") for link in links
    )
    return links


def test_migrate_then_runserver_serves_the_console_and_docs_without_collectstatic(serve, tmp_path):
    env = server_env(tmp_path)  # DEBUG off, the production storage, nothing collected
    assert manage("migrate", "--noinput", "-v0", env=env).returncode == 0
    port = free_port()

    base = serve([sys.executable, "manage.py", "runserver", "--noreload", str(port)], env, port)
    links = static_links(base)

    assert not [link for link in links if HASHED.search(link)]
    for link in links:
        status, headers, _ = fetch(base + link)
        assert status == 200, link
        assert "immutable" not in headers.get("Cache-Control", "")  # plain names can change


def test_after_collectstatic_production_serves_hashed_compressed_files(serve, tmp_path):
    env = server_env(tmp_path, DEBUG="false")
    collected = manage("collectstatic", "--noinput", "-v0", env=env)
    assert collected.returncode == 0, collected.stderr
    port = free_port()
    gunicorn = [sys.executable, "-m", "gunicorn", "memory_console.wsgi", "--no-control-socket"]

    base = serve([*gunicorn, "--bind", f"127.0.0.1:{port}", "--workers", "1"], env, port)
    links = static_links(base)

    assert links and all(HASHED.search(link) for link in links), links
    status, headers, _ = fetch(base + next(link for link in links if "console" in link))
    assert status == 200
    assert "immutable" in headers["Cache-Control"]
    assert (tmp_path / "static" / "staticfiles.json").exists()
    assert list((tmp_path / "static").rglob("console.*.css.gz"))  # whitenoise's compressed copy
