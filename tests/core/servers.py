"""The real server started in a subprocess on a free loopback port, for tests of real HTTP."""

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def server_env(data_dir: Path, **overrides: str) -> dict[str, str]:
    """The environment of a fresh deployment: production settings, its own data directory.

    Without a DATABASE_URL among the overrides it uses SQLite in data_dir, whatever the test
    run itself uses.
    """
    env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    env.update(DATA_DIR=str(data_dir), DJANGO_SETTINGS_MODULE="memory_console.settings")
    env.update(overrides)
    return env


def manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )


def start(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    """Start a server process whose output goes to log (a pipe nobody reads would fill up)."""
    with log.open("wb") as output:
        return subprocess.Popen(args, cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT)


def wait_until_serving(url: str, process: subprocess.Popen, log: Path, timeout=60.0) -> None:
    """Return once url answers at all (any status), failing with the log if it never does."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the server exited with {process.returncode}:\n{log.read_text()}")
        try:
            urllib.request.urlopen(url, timeout=5).close()
            return
        except urllib.error.HTTPError:
            return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"{url} did not answer within {timeout}s:\n{log.read_text()}")


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def fetch(url: str) -> tuple[int, dict[str, str], bytes]:
    """GET url; return the status, headers and body, for error statuses too."""
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()
