"""Real worker processes and concurrent clients for tests: what several test files share."""

import asyncio
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests
from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parents[1]


def database_url() -> str:
    """The DATABASE_URL of this test's database, for a process the test starts."""
    db = connection.settings_dict
    if connection.vendor == "postgresql":
        host = db["HOST"] or "127.0.0.1"
        return f"postgres://{db['USER']}@{host}:{db['PORT'] or 5432}/{db['NAME']}"
    return f"sqlite:///{db['NAME']}"


def worker_env(**variables: str) -> dict:
    """The environment of a process that uses this test's database and files, plus variables."""
    return {
        **os.environ,
        "DATABASE_URL": database_url(),
        "MEDIA_ROOT": str(settings.MEDIA_ROOT),
        "DJANGO_SETTINGS_MODULE": "memory_console.settings",
        **variables,
    }


def start_run_worker(env: dict) -> subprocess.Popen:
    """Start `manage.py run_worker` in its own process group (so a test can kill -9 it)."""
    return subprocess.Popen(
        [sys.executable, "manage.py", "run_worker", "--poll", "0.1"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def wait_until(condition, timeout: float, what: str):
    """Return condition()'s first true value; fail after timeout seconds, naming what."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def send_at_once(base_url: str, key: str, calls: list[tuple[str, str, dict]]) -> list:
    """Send every (method, path, body) at the same moment, one client each; answers in order."""
    start = threading.Barrier(len(calls))

    def send(call):
        method, path, body = call
        session = requests.Session()
        session.headers["Authorization"] = f"Bearer {key}"
        start.wait()
        return session.request(method, f"{base_url}{path}", json=body, timeout=60)

    with ThreadPoolExecutor(len(calls)) as pool:
        return list(pool.map(send, calls))


def run_async(coroutine):
    """Run a coroutine to its end on a new event loop in a thread of its own, and return its
    result (or raise its exception): the browser tests' driver keeps a loop running in the
    main thread, where asyncio.run() would refuse."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()
