"""A/B latency: two checkouts of Memory Console serve one kept database, requests alternating.

On a machine whose speed drifts, two benchmark runs minutes apart differ by more than most
changes do. Here both checkouts serve the same data at the same time (gunicorn 2 workers x 4
threads each, as `make run`), and every query goes to A and to B one right after the other, the
order alternating, so drift hits both alike. The data is a database a benchmark kept:

- `--case context` / `context-recall`: bench/context.py --keep (POST
  /api/v1/threads/{id}/context on its thread, with the agent's semantic_recall_enabled set off or
  on; the setting stays so in the kept database);
- `--case thread-search`: bench/search.py --keep (POST /api/v1/search with thread_id on its
  thread, top_k 10);
- `--case project-search`: bench/search.py --keep (POST /api/v1/search over all messages of its
  large project, 1M on PostgreSQL, top_k 10);
- `--case knowledge-search`: bench/search.py --keep (POST /api/v1/search over the knowledge of
  its `hybrid` project, 100k chunks, top_k 10).

Queries are one to three words drawn (seeded) from the stored texts. Both checkouts share the
database's schema, or, across a migration, A serves a copy of the database left at A's
migrations (--a-database; `createdb -T` the kept one before migrating it for B). Each answer
must be 200.

Without --a, checkout B alone serves the kept database (one server, as the benchmarks run it):
a benchmark's figure again without loading its data again. Two servers side by side measure
both a little slower than one alone.

Run it:
    .venv/bin/python bench/ab.py --a ../before --case context \\
        --database postgres://postgres@127.0.0.1:5432/memory_console_bench_context
    .venv/bin/python bench/ab.py --a ../before --case context --data-dir /tmp/mc-bench-xyz
    .venv/bin/python bench/ab.py --case thread-search \
        --database postgres://postgres@127.0.0.1:5432/memory_console_bench_search
"""

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from statistics import mean

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/ is not a package
from common import ROOT, Api, expect_status, gunicorn, http_floor, percentile, venv_bin

# Each case: the kept benchmark's project, and the thread and words it reads (Django code run
# in checkout B, printing JSON).
CASES = {
    "context": "context",
    "context-recall": "context",
    "thread-search": "hybrid",
    "project-search": "large",
    "knowledge-search": "hybrid",
}
# The kinds of item each case's words are drawn from (a thread's own messages for "message").
WORDS_FROM = {"context": ["chunk", "entry"], "context-recall": ["chunk", "entry"]}
WORDS_FROM["knowledge-search"] = ["chunk"]
AGENT = "bench"
WARMUP = 20
FIND = """
import json, os, django
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_console.settings")
django.setup()
from apps.memconfig.services import config_update
from apps.search.models import SearchItem
from apps.threads.models import Thread

thread = Thread.objects.filter(agent__project__slug=PROJECT).order_by("-last_seq").first()
if RECALL is not None:
    changes = {"semantic_recall_enabled": RECALL}
    config_update(agent=thread.agent, changes=changes, changed_by="bench/ab.py")
items = SearchItem.objects.filter(kind__in=KINDS, project=thread.agent.project_id)
if KINDS == ["message"]:
    items = items.filter(thread=thread)
words = set()
for text in items.order_by("id").values_list("content", flat=True)[::97][:200]:
    words.update(w.strip(".,?!").lower() for w in text.split() if w.strip(".,?!").isalpha())
print(json.dumps({"thread": str(thread.id), "words": sorted(w for w in words if len(w) > 3)}))
"""


def run(checkout: Path, env: dict, *args: str) -> str:
    """Run the checkout's Python (its own .venv if it has one) and return stdout."""
    python = venv_bin(checkout) / "python"
    done = subprocess.run([str(python), *args], cwd=checkout, env=env, capture_output=True)
    if done.returncode:
        raise RuntimeError(done.stderr.decode()[-2000:])
    return done.stdout.decode()


def serve(stack: ExitStack, checkout: Path, env: dict, port: int) -> str:
    """Serve the checkout on the port until the stack closes; return its base URL."""
    return stack.enter_context(gunicorn(env, port, checkout=checkout.resolve(), name=f"ab-{port}"))


def request(case: str, thread: str, query: str, max_tokens: int) -> tuple[str, dict]:
    """Return the path and body of one query of the case."""
    if case == "thread-search":
        return "/api/v1/search", {"query": query, "thread_id": thread, "top_k": 10}
    if case == "project-search":
        return "/api/v1/search", {"query": query, "top_k": 10}
    if case == "knowledge-search":
        return "/api/v1/search", {"query": query, "scopes": ["knowledge"], "top_k": 10}
    return f"/api/v1/threads/{thread}/context", {"query": query, "max_tokens": max_tokens}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--a", type=Path, help="checkout A (e.g. before); without it, B alone is measured"
    )
    parser.add_argument("--b", type=Path, default=ROOT, help="checkout B (default: this one)")
    parser.add_argument("--case", choices=sorted(CASES), default="context")
    parser.add_argument("--database", help="PostgreSQL URL of the kept database")
    parser.add_argument("--data-dir", help="the kept data directory (SQLite)")
    parser.add_argument(
        "--a-database",
        help="A serves this PostgreSQL database instead: a copy of --database (CREATE DATABASE "
        "... TEMPLATE) left at A's migrations, to compare across a migration",
    )
    parser.add_argument("--queries", type=int, default=200, help="queries sent to each")
    parser.add_argument("--port", type=int, default=8801, help="A's port; B's is the next")
    parser.add_argument(
        "--max-tokens", type=int, default=32_000, help="the context cases' max_tokens"
    )
    args = parser.parse_args()
    if bool(args.database) == bool(args.data_dir):
        parser.error("give one of --database (PostgreSQL) and --data-dir (SQLite)")
    env = {
        **os.environ,
        "SECRET_KEY": "bench-only-secret-key",
        "API_RATE_LIMIT": "",
        "LOG_FORMAT": "plain",
        "LOG_LEVEL": "WARNING",
        "DATA_DIR": args.data_dir or tempfile.mkdtemp(prefix="mc-bench-ab-"),
    }
    env.pop("CELERY_BROKER_URL", None)
    env.pop("DATABASE_URL", None)
    if args.database:
        env["DATABASE_URL"] = args.database
    project = CASES[args.case]
    recall = {"context": False, "context-recall": True}.get(args.case)
    kinds = WORDS_FROM.get(args.case, ["message"])
    code = FIND.replace("PROJECT", repr(project)).replace("RECALL", repr(recall))
    code = code.replace("KINDS", repr(kinds))
    found = json.loads(run(args.b, env, "-c", code).splitlines()[-1])

    key = run(args.b, env, "manage.py", "create_agent", "--project", project, "--agent", AGENT)
    key = key_a = key.strip().splitlines()[-1]
    env_a = {**env, "DATABASE_URL": args.a_database} if args.a_database else env
    if args.a and args.a_database:  # A's copy: the same setting, a key of its own
        run(args.a, env_a, "-c", code)
        key_a = run(
            args.a, env_a, "manage.py", "create_agent", "--project", project, "--agent", AGENT
        )
        key_a = key_a.strip().splitlines()[-1]
    rng = random.Random(11)
    queries = [
        " ".join(rng.sample(found["words"], rng.choice((1, 2, 3))))
        for _ in range(WARMUP + args.queries)
    ]
    with ExitStack() as stack:
        sides = {"B": Api(serve(stack, args.b, env, args.port + 1), key)}
        if args.a:
            sides["A"] = Api(serve(stack, args.a, env_a, args.port), key_a)
        sessions = {side: api.session() for side, api in sides.items()}
        latencies: dict[str, list[float]] = {side: [] for side in sides}
        order = sorted(sides)

        def send(side: str, query: str) -> float:
            path, body = request(args.case, found["thread"], query, args.max_tokens)
            started = time.perf_counter()
            response = sessions[side].post(f"{sides[side].base_url}{path}", json=body)
            elapsed = (time.perf_counter() - started) * 1000
            expect_status(response, 200)
            return elapsed

        for query in queries[:WARMUP]:
            for side in order:
                send(side, query)
        for index, query in enumerate(queries[WARMUP:]):
            for side in order if index % 2 == 0 else order[::-1]:
                latencies[side].append(send(side, query))
        floor = http_floor(sides["B"].base_url, 100)
    print(
        f"A/B, {args.case} on {'PostgreSQL' if args.database else 'SQLite'}, {args.queries} "
        f"queries each{', alternating' if args.a else ''}; latencies in ms"
    )
    for side in order:
        values, checkout = latencies[side], getattr(args, side.lower())
        print(
            f"{side} {checkout}: p50 {percentile(values, 50):.1f}  p95 {percentile(values, 95):.1f}"
            f"  p99 {percentile(values, 99):.1f}  mean {mean(values):.1f}"
        )
    print(floor)


if __name__ == "__main__":
    main()
