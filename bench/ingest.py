"""Ingest benchmark: how fast Memory Console stores messages, measured through its HTTP API.

For each backend it builds a fresh installation: a temporary data directory (SQLite, the embedded
default) or a fresh PostgreSQL database `memory_console_bench` on postgres@127.0.0.1:5432, then
`migrate`, `create_agent`, and gunicorn with 2 workers x 4 threads (as `make run`). It pre-seeds
--seed messages through the API, in batches of 1000 into threads of 1000 messages, and measures:

- single append: --singles one-message POSTs, sent one after another by one keep-alive client into
  a thread that already holds messages; latency p50/p95/p99 in ms (target: p95 <= 15 ms);
- batch append: batch-of-100 POSTs, --batches of them from one client, then --batches from each of
  4 concurrent clients, each into its own thread; throughput in messages/s (target: >= 3,000).

With --embedder MODEL (e.g. local:minilm-onnx, --embedder-dims 384) the project embeds its
messages, and one `manage.py run_worker` runs beside the server throughout, as `make run` does:
the appends' figures then include the worker's share of the CPUs, and the run reports the lag the
embedder leaves: messages without a vector when the timed appends end, and how long the worker
then takes to embed them all (its indexing rate). Use a small --seed with it: every seeded
message is embedded too.

The client runs on the same machine as the server and the database, so they share the CPUs.
Everything is removed afterwards: the server is stopped, the temporary directory deleted and the
PostgreSQL database dropped.

Run it with `make bench`, or:
    .venv/bin/python bench/ingest.py [--backend sqlite|postgres|both] [--seed 100000]
        [--singles 1000] [--batches 50] [--port 8765]
    .venv/bin/python bench/ingest.py --backend sqlite --seed 0 --embedder local:minilm-onnx
"""

import argparse
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass, replace
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/ is not a package
from common import (
    Api,
    backend_environment,
    create_agent,
    expect_status,
    gunicorn,
    log,
    manage,
    percentile,
    record,
    verdict,
)
from ingest_documents import Database, run_worker

PG_DATABASE = "memory_console_bench"
SEED_BATCH = 1000  # messages per seeding POST, and per seeded thread
BATCH_SIZE = 100
CLIENTS = 4
TARGET_P95_MS = 15.0
TARGET_MSG_PER_S = 3000.0
CONTENT = (
    "The user asked how to rotate the API key of the staging agent without downtime; the "
    "assistant explained issuing a second key, switching the deployment, then revoking the old one."
)


@dataclass(frozen=True)
class Lag:
    """What the embedder left behind the appends, and how fast the worker caught up."""

    model: str
    behind: int  # messages without a vector when the timed appends ended
    messages: int  # messages stored in all
    catch_up_seconds: float  # until every message had its vector


@dataclass(frozen=True)
class Figures:
    """The measured figures of one backend."""

    backend: str
    seeded: int
    seed_seconds: float
    p50_ms: float
    p95_ms: float
    p99_ms: float
    batch_one_client: float
    batch_clients: float
    lag: Lag | None = None


def parse_args() -> argparse.Namespace:
    """Read the command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    parser.add_argument("--seed", type=int, default=100_000, help="messages stored beforehand")
    parser.add_argument("--singles", type=int, default=1000, help="single-message POSTs timed")
    parser.add_argument("--batches", type=int, default=50, help="batch-of-100 POSTs per client")
    parser.add_argument("--port", type=int, default=8765, help="port for the gunicorn under test")
    parser.add_argument("--embedder", default="", help="the project's embedder_model, if any")
    parser.add_argument("--embedder-dims", type=int, default=384, help="its dimensions")
    parser.add_argument(
        "--catch-up-timeout", type=float, default=3600, help="seconds to wait for the vectors"
    )
    return parser.parse_args()


def create_thread(session: requests.Session, api: Api) -> str:
    """Create a thread and return its id."""
    response = session.post(
        f"{api.base_url}/api/v1/threads", json={"resource_id": "u1", "title": "bench"}
    )
    expect_created(response)
    return response.json()["id"]


def append(session: requests.Session, api: Api, thread_id: str, count: int) -> None:
    """Append count messages to the thread in one POST."""
    messages = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"{i}: {CONTENT}"}
        for i in range(count)
    ]
    response = session.post(
        f"{api.base_url}/api/v1/threads/{thread_id}/messages", json={"messages": messages}
    )
    expect_created(response)


def expect_created(response: requests.Response) -> None:
    """Fail loudly unless the server answered 201 Created."""
    expect_status(response, 201)


def seed(api: Api, total: int) -> tuple[list[str], float]:
    """Store total messages, one POST of SEED_BATCH per new thread; return threads and seconds."""
    session = api.session()
    threads: list[str] = []
    start = time.perf_counter()
    for first in range(0, total, SEED_BATCH):
        threads.append(create_thread(session, api))
        append(session, api, threads[-1], min(SEED_BATCH, total - first))
        if (first + SEED_BATCH) % (10 * SEED_BATCH) == 0:
            log(f"  seeded {first + SEED_BATCH} messages, {time.perf_counter() - start:.1f} s")
    return threads, time.perf_counter() - start


def time_singles(api: Api, thread_id: str, count: int) -> list[float]:
    """Send count single-message POSTs one after another; return each latency in ms."""
    session = api.session()
    latencies = []
    for _ in range(count):
        start = time.perf_counter()
        append(session, api, thread_id, 1)
        latencies.append((time.perf_counter() - start) * 1000)
    return latencies


def batch_throughput(api: Api, thread_ids: list[str], batches: int) -> float:
    """Send batches of BATCH_SIZE from one client per thread, concurrently; return messages/s."""

    def client(thread_id: str) -> None:
        session = api.session()
        for _ in range(batches):
            append(session, api, thread_id, BATCH_SIZE)

    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=len(thread_ids)) as pool:
        list(pool.map(client, thread_ids))
    return len(thread_ids) * batches * BATCH_SIZE / (time.perf_counter() - start)


def measure(api: Api, args: argparse.Namespace, backend: str) -> Figures:
    """Seed the server, then time single appends and batch appends."""
    log(f"{backend}: seeding {args.seed} messages")
    seeded, seed_seconds = seed(api, args.seed)
    session = api.session()
    targets = seeded[: 2 + CLIENTS]
    targets += [create_thread(session, api) for _ in range(2 + CLIENTS - len(targets))]
    log(f"{backend}: {args.singles} single appends")
    latencies = time_singles(api, targets[0], args.singles)
    log(f"{backend}: {args.batches} batches of {BATCH_SIZE}, 1 client then {CLIENTS} clients")
    one_client = batch_throughput(api, targets[1:2], args.batches)
    many_clients = batch_throughput(api, targets[2:], args.batches)
    return Figures(
        backend=backend,
        seeded=args.seed,
        seed_seconds=seed_seconds,
        p50_ms=percentile(latencies, 50),
        p95_ms=percentile(latencies, 95),
        p99_ms=percentile(latencies, 99),
        batch_one_client=one_client,
        batch_clients=many_clients,
    )


def run_backend(backend: str, args: argparse.Namespace) -> Figures:
    """Set up a fresh installation on the backend, serve it and measure it."""
    log(f"{backend}: fresh database, migrate, create_agent")
    with backend_environment(backend, PG_DATABASE) as env:
        manage(env, "migrate", "--noinput")
        key = create_agent(env, "bench", "bench")
        if args.embedder:
            embedder = [
                f"embedder_model={args.embedder}",
                f"embedder_dimensions={args.embedder_dims}",
            ]
            manage(env, "memory_config", "--project", "bench", *[f"--set={e}" for e in embedder])
        worker = run_worker(env) if args.embedder else nullcontext()
        with gunicorn(env, args.port) as base_url, worker:
            figures = measure(Api(base_url, key.strip()), args, backend)
            if args.embedder:
                figures = replace(figures, lag=catch_up(env, args))
            return figures


def catch_up(env: dict[str, str], args: argparse.Namespace) -> Lag:
    """Count the messages still without a vector, then wait until the worker has embedded them."""
    database = Database(env)
    try:
        items, embedded = database.embedded()
        behind = items - embedded
        log(f"  {behind:,} of {items:,} messages without a vector when the appends ended")
        start = time.perf_counter()
        deadline = time.monotonic() + args.catch_up_timeout
        while True:
            items, embedded = database.embedded()
            if embedded >= items:
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"{items - embedded} messages still without a vector")
            time.sleep(1)
        return Lag(args.embedder, behind, items, time.perf_counter() - start)
    finally:
        database.close()


def report(figures: Figures) -> str:
    """Return the one-line summary of a backend's figures, with the targets beside them."""
    p95_ok = verdict(figures.p95_ms <= TARGET_P95_MS)
    one_ok = verdict(figures.batch_one_client >= TARGET_MSG_PER_S)
    many_ok = verdict(figures.batch_clients >= TARGET_MSG_PER_S)
    return (
        f"{figures.backend:<8} single-append p50={figures.p50_ms:.1f}ms "
        f"p95={figures.p95_ms:.1f}ms [{p95_ok}] p99={figures.p99_ms:.1f}ms | "
        f"batch-{BATCH_SIZE}: 1 client {figures.batch_one_client:,.0f} msg/s [{one_ok}], "
        f"{CLIENTS} clients {figures.batch_clients:,.0f} msg/s [{many_ok}] | "
        f"seeded {figures.seeded:,} messages in {figures.seed_seconds:.1f}s "
        f"({figures.seeded / figures.seed_seconds:,.0f} msg/s)"
    )


def lag_report(figures: Figures) -> str:
    """Return the line on what the embedder left behind, if one was configured."""
    lag = figures.lag
    rate = lag.behind / lag.catch_up_seconds if lag.catch_up_seconds else 0.0
    return (
        f"{figures.backend:<8} {lag.model}: {lag.behind:,} of {lag.messages:,} messages "
        f"without a vector when the appends ended; the worker embedded them in "
        f"{lag.catch_up_seconds:.0f} s ({rate:,.0f} messages/s)"
    )


def main() -> None:
    """Benchmark the chosen backends and print their figures."""
    args = parse_args()
    backends = ["sqlite", "postgres"] if args.backend == "both" else [args.backend]
    results = [run_backend(backend, args) for backend in backends]
    print(
        f"Ingest through HTTP (gunicorn 2 workers x 4 threads); {args.singles} single appends, "
        f"{args.batches} batches of {BATCH_SIZE} per client."
    )
    print(
        f"Targets: single-append p95 <= {TARGET_P95_MS:.0f} ms; "
        f"batches >= {TARGET_MSG_PER_S:,.0f} messages/s."
    )
    for figures in results:
        print(report(figures))
        if figures.lag is not None:
            print(lag_report(figures))
        name, backend = "ingest", figures.backend
        record(name, backend, "single append", "p95", figures.p95_ms, "ms", ("<=", TARGET_P95_MS))
        record(name, backend, "single append", "p50", figures.p50_ms, "ms")
        for case, rate in (
            ("batch-100 appends, 1 client", figures.batch_one_client),
            (f"batch-100 appends, {CLIENTS} clients", figures.batch_clients),
        ):
            record(name, backend, case, "throughput", rate, "msg/s", (">=", TARGET_MSG_PER_S))


if __name__ == "__main__":
    main()
