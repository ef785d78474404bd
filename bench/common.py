"""Shared by the benchmarks: a fresh installation on either backend, gunicorn, small helpers.

Not a benchmark itself; bench/ingest.py, bench/search.py, bench/ingest_documents.py and
bench/retrieval.py import it (run them as scripts).
"""

import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psycopg
import requests

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = Path(sys.executable).parent
PG_SERVER = "postgres://postgres@127.0.0.1:5432"


@dataclass(frozen=True)
class Api:
    """Where the server listens and the API key to call it with."""

    base_url: str
    key: str

    def session(self) -> requests.Session:
        """Return a keep-alive session that sends the API key."""
        session = requests.Session()
        session.headers["Authorization"] = f"Bearer {self.key}"
        return session


def log(text: str) -> None:
    """Print a progress line to stderr, keeping stdout for the figures."""
    print(f"[bench] {text}", file=sys.stderr, flush=True)


@contextmanager
def backend_environment(
    backend: str, pg_database: str, *, prefix: str = "mc-bench-", keep: bool = False
) -> Iterator[dict[str, str]]:
    """Yield the server's environment on a fresh, empty database; remove it all afterwards.

    keep leaves the data directory and the PostgreSQL database in place, to study them later.
    """
    data_dir = tempfile.mkdtemp(prefix=prefix)
    env = {**os.environ, "DATA_DIR": data_dir, "SECRET_KEY": "bench-only-secret-key"}
    env.pop("CELERY_BROKER_URL", None)
    try:
        if backend == "sqlite":
            env.pop("DATABASE_URL", None)
            yield env
            return
        with postgres_database(pg_database, keep=keep):
            yield {**env, "DATABASE_URL": f"{PG_SERVER}/{pg_database}"}
    finally:
        if keep:
            log(f"kept the data directory {data_dir}")
        else:
            shutil.rmtree(data_dir, ignore_errors=True)


@contextmanager
def postgres_database(name: str, *, keep: bool = False) -> Iterator[None]:
    """Create the database afresh and drop it on exit, unless keep."""
    drop = f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"
    with psycopg.connect(f"{PG_SERVER}/postgres", autocommit=True) as conn:
        conn.execute(drop)
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield
    finally:
        if keep:
            log(f"kept the database {PG_SERVER}/{name}")
        else:
            with psycopg.connect(f"{PG_SERVER}/postgres", autocommit=True) as conn:
                conn.execute(drop)


def manage(env: dict[str, str], *args: str) -> str:
    """Run a manage.py command in the environment and return its stdout."""
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{done.stderr}")
    return done.stdout


def create_agent(env: dict[str, str], project: str, agent: str) -> str:
    """Create the project and agent with `create_agent` and return the new API key."""
    return manage(env, "create_agent", "--project", project, "--agent", agent).splitlines()[-1]


@contextmanager
def gunicorn(
    env: dict[str, str],
    port: int,
    *,
    request_timeout: float = 2,
    retry_on: tuple[type[Exception], ...] = (requests.ConnectionError, requests.Timeout),
    kill_lingering: bool = False,
) -> Iterator[str]:
    """Run gunicorn on the port, yield its base URL once healthy, then stop it."""
    # request_timeout and retry_on go to wait_healthy, kill_lingering to background.
    command = [str(VENV_BIN / "gunicorn"), "memory_console.wsgi", "--bind", f"127.0.0.1:{port}"]
    command += ["--workers", "2", "--threads", "4"]
    with background(command, env, "gunicorn", kill_lingering=kill_lingering) as (server, log_path):
        base_url = f"http://127.0.0.1:{port}"
        wait_healthy(base_url, server, log_path, request_timeout=request_timeout, retry_on=retry_on)
        yield base_url


@contextmanager
def background(
    command: list[str], env: dict[str, str], name: str, *, kill_lingering: bool = False
) -> Iterator[tuple[subprocess.Popen, Path]]:
    """Start a process logging to DATA_DIR/<name>.log; SIGTERM it on exit."""
    # If it has not exited 30 s later: SIGKILL it when kill_lingering, else raise TimeoutExpired.
    log_path = Path(env["DATA_DIR"]) / f"{name}.log"
    with log_path.open("w") as log_file:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log_file, stderr=log_file)
    try:
        yield process, log_path
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            if not kill_lingering:
                raise
            process.kill()
            process.wait()


def wait_healthy(
    base_url: str,
    server: subprocess.Popen,
    log_path: Path,
    *,
    request_timeout: float = 2,
    retry_on: tuple[type[Exception], ...] = (requests.ConnectionError, requests.Timeout),
) -> None:
    """Return when GET /healthz answers 200; fail if the server exits or 30 s pass."""
    # A request that raises one of retry_on (a timeout after request_timeout s) is tried again.
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"gunicorn exited:\n{log_path.read_text()[-2000:]}")
        try:
            if requests.get(f"{base_url}/healthz", timeout=request_timeout).status_code == 200:
                return
        except retry_on:
            pass  # not listening yet, or the workers are still starting
        time.sleep(0.2)
    raise RuntimeError(f"gunicorn not healthy after 30 s:\n{log_path.read_text()[-2000:]}")


def expect_status(response: requests.Response, *statuses: int) -> requests.Response:
    """Return the response; fail loudly unless the server answered with one of the statuses."""
    if response.status_code not in statuses:
        raise RuntimeError(
            f"{response.request.method} {response.url}: {response.status_code} "
            f"{response.text[:500]}"
        )
    return response


def percentile(values: list[float], pct: float) -> float:
    """Return the nearest-rank percentile of the values."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(pct / 100 * len(ordered)) - 1)]


def verdict(ok: bool) -> str:
    """Return the mark printed beside a figure for its target."""
    return "ok" if ok else "MISSED"
