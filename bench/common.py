"""Shared by the benchmarks: a fresh installation on either backend, gunicorn, small helpers.

Not a benchmark itself; every script in bench/ imports it (run them as scripts). Each script
also hands its headline figures to record(), which appends them as JSON lines to the file named
by $BENCH_RESULTS when it is set: bench/run_all.py (`make bench`) collects them into RESULTS.md.

A script loads data through the service layer by running itself in a Django subprocess, one
loading task at a time: loader_run(script, env, task, **params) starts `script LOADER_ARG
{"task": ..., **params}`, the script calls django_setup() and prints the task's JSON result on
its last line. Tasks shared by scripts (task_vacuum, profile_request) are defined here.
"""

import json
import math
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psycopg
import requests

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = Path(sys.executable).parent
PG_SERVER = "postgres://postgres@127.0.0.1:5432"
LOADER_ARG = "--_loader"  # runs one loading task inside Django (the bench calls itself)
ANALYZE_EVERY = 60.0  # seconds; autovacuum's default naptime
_LONG_LITERAL = re.compile(r"'[\[{][^'\]}]{60,}[\]}]'")  # vectors and id lists in plans


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
    # The benchmarks measure the server, not the per-key rate limit (one client sends far more
    # than API_RATE_LIMIT's 600 a minute), nor the JSON request log on standard error.
    env = {
        **os.environ,
        "DATA_DIR": data_dir,
        "SECRET_KEY": "bench-only-secret-key",
        "API_RATE_LIMIT": "",
        "LOG_FORMAT": "plain",
        "LOG_LEVEL": "WARNING",
    }
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


def venv_bin(checkout: Path | None) -> Path:
    """Return where another checkout's programs are (its own .venv, else this interpreter's);
    None is this checkout, run by this interpreter."""
    own = checkout / ".venv" / "bin" if checkout is not None else None
    return own if own is not None and own.exists() else VENV_BIN


@contextmanager
def gunicorn(
    env: dict[str, str],
    port: int,
    *,
    checkout: Path | None = None,
    name: str = "gunicorn",
    request_timeout: float = 2,
    retry_on: tuple[type[Exception], ...] = (requests.ConnectionError, requests.Timeout),
    kill_lingering: bool = False,
) -> Iterator[str]:
    """Run gunicorn on the port, yield its base URL once healthy, then stop it.

    checkout serves another checkout's code (bench/ab.py); name is its log's (DATA_DIR/name.log).
    """
    # request_timeout and retry_on go to wait_healthy, kill_lingering to background.
    # A server left on the port (an interrupted run's) would answer the health check for this
    # one and then refuse its API keys: say so instead.
    with socket.socket() as probe:
        if probe.connect_ex(("127.0.0.1", port)) == 0:
            raise RuntimeError(f"port {port} is in use (a server left by an earlier run?)")
    command = [str(venv_bin(checkout) / "gunicorn"), "memory_console.wsgi"]
    command += ["--bind", f"127.0.0.1:{port}", "--workers", "2", "--threads", "4"]
    with background(command, env, name, cwd=checkout or ROOT, kill_lingering=kill_lingering) as (
        server,
        log_path,
    ):
        base_url = f"http://127.0.0.1:{port}"
        wait_healthy(base_url, server, log_path, request_timeout=request_timeout, retry_on=retry_on)
        yield base_url


@contextmanager
def background(
    command: list[str],
    env: dict[str, str],
    name: str,
    *,
    cwd: Path = ROOT,
    kill_lingering: bool = False,
) -> Iterator[tuple[subprocess.Popen, Path]]:
    """Start a process in cwd, logging to DATA_DIR/<name>.log; SIGTERM it on exit."""
    # If it has not exited 30 s later: SIGKILL it when kill_lingering, else raise TimeoutExpired.
    log_path = Path(env["DATA_DIR"]) / f"{name}.log"
    with log_path.open("w") as log_file:
        process = subprocess.Popen(command, cwd=cwd, env=env, stdout=log_file, stderr=log_file)
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


RESULTS_ENV = "BENCH_RESULTS"  # the file bench/run_all.py collects headline figures from
_COMPARE = {
    "<=": lambda value, bound: value <= bound,
    ">=": lambda value, bound: value >= bound,
    ">": lambda value, bound: value > bound,
}


def record(
    benchmark: str,
    backend: str,
    case: str,
    metric: str,
    value: float,
    unit: str,
    target: tuple[str, float] | None = None,
) -> None:
    """Append one headline figure as a JSON line to the file $BENCH_RESULTS names, if set.

    target is (op, bound), op one of <=, >=, >, bound in the figure's unit; the line says whether
    the figure meets it.
    """
    path = os.environ.get(RESULTS_ENV)
    if not path:
        return
    line = {"benchmark": benchmark, "backend": backend, "case": case, "metric": metric}
    line |= {"value": round(float(value), 4), "unit": unit, "target": None, "met": None}
    if target is not None:
        op, bound = target
        line |= {"target": [op, bound], "met": _COMPARE[op](value, bound)}
    with open(path, "a", encoding="utf-8") as results:  # one write per line: appends stay whole
        results.write(json.dumps(line) + "\n")


def percentile(values: list[float], pct: float) -> float:
    """Return the nearest-rank percentile of the values."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(pct / 100 * len(ordered)) - 1)]


def verdict(ok: bool) -> str:
    """Return the mark printed beside a figure for its target."""
    return "ok" if ok else "MISSED"


def http_floor(base_url: str, count: int) -> str:
    """Return the latency of GET /healthz from a keep-alive client: a floor under any request."""
    session, latencies = requests.Session(), []
    for _ in range(count):
        start = time.perf_counter()
        expect_status(session.get(f"{base_url}/healthz", timeout=30), 200)
        latencies.append((time.perf_counter() - start) * 1000)
    return (
        f"HTTP floor, GET /healthz (one SELECT) x{count}: p50 {percentile(latencies, 50):.1f} ms, "
        f"p95 {percentile(latencies, 95):.1f} ms"
    )


@contextmanager
def autoanalyze(env: dict[str, str]) -> Iterator[str]:
    """While loading, ANALYZE every minute if PostgreSQL's autovacuum is off; yield a note."""
    url = env.get("DATABASE_URL")
    if not url:
        yield ""
        return
    with psycopg.connect(url, autocommit=True) as conn:
        if conn.execute("SHOW autovacuum").fetchone()[0] == "on":
            yield ""
            return
    stop = threading.Event()

    def analyze() -> None:
        with psycopg.connect(url, autocommit=True) as conn:
            while not stop.wait(ANALYZE_EVERY):
                conn.execute("ANALYZE")

    worker = threading.Thread(target=analyze, daemon=True)
    worker.start()
    try:
        yield (
            "this PostgreSQL server runs with autovacuum = off, so the bench ran ANALYZE every "
            f"{ANALYZE_EVERY:.0f} s while loading, as autovacuum would"
        )
    finally:
        stop.set()
        worker.join()


def elapsed(start: float) -> str:
    """Return the seconds since start, for progress lines."""
    return f"{time.perf_counter() - start:.0f} s"


def lap(start: float) -> float:
    """Return the ms since start."""
    return (time.perf_counter() - start) * 1000


# --- Loading tasks in Django subprocesses -----------------------------------------------------


def loader_run(script: Path, env: dict[str, str], task: str, **params) -> dict:
    """Run one loading task of the script in a Django subprocess and return its JSON result."""
    command = [sys.executable, str(script), LOADER_ARG]
    done = subprocess.run(
        [*command, json.dumps({"task": task, **params})],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"loader task {task} failed (exit {done.returncode})")
    return json.loads(done.stdout.splitlines()[-1])


def loaders_run(script: Path, env: dict[str, str], task: str, specs: list[dict]) -> list[dict]:
    """Run one loading task of the script per spec, concurrently, and return their results."""
    with ThreadPoolExecutor(max_workers=len(specs)) as pool:
        return list(pool.map(lambda spec: loader_run(script, env, task, **spec), specs))


def django_setup() -> None:
    """Set up Django in this process (a loading task's subprocess)."""
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_console.settings")
    Path(os.environ["DATA_DIR"], "static").mkdir(exist_ok=True)  # quiets WhiteNoise's warning
    import django

    django.setup()


def task_vacuum(table: str = "") -> dict:
    """VACUUM ANALYZE the database (or one table) on PostgreSQL; nothing on SQLite."""
    from django.db import connection

    start = time.perf_counter()
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(f"VACUUM ANALYZE {table}")
    return {"seconds": time.perf_counter() - start}


# --- Profiling one request in-process (inside Django) -----------------------------------------


def profile_request(path: str, key: str, body: dict) -> dict:
    """POST body to path through Django in-process, timing each SQL statement and profiling it."""
    import cProfile
    import io
    import pstats

    from django.db import connection
    from django.test import Client

    client, statements = Client(HTTP_HOST="127.0.0.1"), []
    headers = {"Authorization": f"Bearer {key}"}

    def send() -> None:
        client.post(path, body, content_type="application/json", headers=headers)

    for _ in range(3):  # warm the process's caches first
        send()
    start = time.perf_counter()
    send()
    total = lap(start)
    with connection.execute_wrapper(StatementTimer(statements)):
        send()
    profiler = cProfile.Profile()
    profiler.runcall(send)
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(r"/apps/", 14)
    slow = sorted(statements, key=lambda s: -s[2])[:2]
    return {
        "total_ms": total,
        "statements": [(sql_summary(sql), round(ms, 2)) for sql, _, ms in statements],
        "plans": [explain(sql, sql_params, statements) for sql, sql_params, _ in slow],
        "hotspots": [line for line in out.getvalue().splitlines() if re.match(r"\s+\d", line)],
    }


class StatementTimer:
    """A Django execute wrapper that records each statement with its duration in ms."""

    def __init__(self, statements: list):
        self.statements = statements

    def __call__(self, execute, sql, params, many, context):
        """Run the statement and record it."""
        start = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            self.statements.append((sql, list(params or []), lap(start)))


def sql_summary(sql: str) -> str:
    """Return a statement on one line, shortened."""
    text = " ".join(sql.split())
    return text if len(text) <= 150 else text[:147] + "..."


def explain(sql: str, params: list, statements: list) -> dict:
    """Return the plan of a statement: EXPLAIN ANALYZE on PostgreSQL, QUERY PLAN on SQLite."""
    from django.db import connection, transaction

    if not sql.lstrip().upper().startswith(("SELECT", "WITH")):
        return {"sql": sql_summary(sql), "plan": []}
    settings = [s for s, _, _ in statements if s.startswith("SET LOCAL")]
    postgres = connection.vendor == "postgresql"
    prefix = "EXPLAIN (ANALYZE, BUFFERS) " if postgres else "EXPLAIN QUERY PLAN "
    with transaction.atomic(), connection.cursor() as cursor:
        for setting in settings:  # the HNSW path's SET LOCALs, as in the search
            cursor.execute(setting)
        cursor.execute(prefix + sql, params)
        rows = [" ".join(str(part) for part in row) for row in cursor.fetchall()]
    plan = [_LONG_LITERAL.sub("'[...]'", row)[:240] for row in rows]
    return {"sql": sql_summary(sql), "plan": plan[:70]}
