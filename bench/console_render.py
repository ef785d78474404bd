"""Console render benchmark: server-side render time of a thread page and of the moderation queue.

Builds a fresh database (a temporary SQLite file, or a fresh PostgreSQL database
`memory_console_bench_console_<pid>`), stores one thread of --messages messages as an agent loop
logs them (user turns, tool calls with JSON arguments, JSON tool results paired by tool_call_id,
some of them 429 / 503 errors, answers; in runs of 10, every 7th run failed) through the real write
path (on PostgreSQL then VACUUM ANALYZEd, as autovacuum would in time), then renders the thread
page (/console/threads/<id>/) with Django's test client as a logged-in operator, --renders times,
and prints p50/p95 in milliseconds. The page shows the newest 100 messages as timeline steps
with their runs' bands, and the runs, plan, iterations, checkpoints and snapshots beside them;
older messages load on demand.

The moderation case stores --pending pending entries (default 50) proposed by two agents for
several end users, each quoting a message of its own short thread, then renders the queue
(/console/moderation/, 50 entries a page) as a moderator the same way.

Run: .venv/bin/python bench/console_render.py [--backend sqlite|postgres|both] [--messages 10000]
[--pending 50] [--case thread|moderation|both]
Check that it works: .venv/bin/python bench/console_render.py --backend sqlite --messages 60
--renders 3
Targets: thread page p95 <= 150 ms; moderation queue p95 <= 300 ms.
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from common import record, task_vacuum  # bench/, the script's directory, is on sys.path

ROOT = Path(__file__).resolve().parent.parent
PG_SERVER = "postgres://postgres@127.0.0.1:5432"
# One database per run: two runs at once (a shared machine) must not drop each other's.
PG_NAME = f"memory_console_bench_console_{os.getpid()}"
TARGET_P95_MS = 150
TARGET_MODERATION_P95_MS = 300


def main() -> None:
    """Parse arguments and run one backend per child process (settings are per process)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--renders", type=int, default=50)
    parser.add_argument("--pending", type=int, default=50)
    parser.add_argument("--case", choices=["thread", "moderation", "both"], default="both")
    parser.add_argument(
        "--embedder",
        default="local:minilm-onnx",
        help="the moderation project's embedder_model (similar entries are compared by "
        "vectors); empty for none",
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    cases = ["thread", "moderation"] if args.case == "both" else [args.case]
    if args.child:
        run_backend(args.child, args.messages, args.renders, args.pending, cases, args.embedder)
        return
    backends = ["sqlite", "postgres"] if args.backend == "both" else [args.backend]
    for backend in backends:
        child = [sys.executable, __file__, "--child", backend, "--case", args.case]
        child += ["--messages", str(args.messages), "--renders", str(args.renders)]
        child += ["--pending", str(args.pending), "--embedder", args.embedder]
        os.spawnv(os.P_WAIT, sys.executable, child)


def run_backend(
    backend: str, messages: int, renders: int, pending: int, cases: list, embedder: str
) -> None:
    """Set up the backend's database, fill what each case shows, and time its page."""
    data_dir = tempfile.mkdtemp(prefix="mc-bench-console-")
    os.environ.update(DATA_DIR=data_dir, SECRET_KEY="bench", ALLOWED_HOSTS="testserver")
    os.environ.pop("CELERY_BROKER_URL", None)
    if backend == "postgres":
        recreate_postgres()
        os.environ["DATABASE_URL"] = f"{PG_SERVER}/{PG_NAME}"
    else:
        os.environ.pop("DATABASE_URL", None)
    os.environ["DJANGO_SETTINGS_MODULE"] = "memory_console.settings"
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    call_command("collectstatic", interactive=False, verbosity=0)
    try:
        results = []
        if "thread" in cases:
            thread_id, seconds = fill_thread(messages)
            task_vacuum()  # statistics for the planner; the server may run with autovacuum off
            results.append(("thread", time_renders(f"/console/threads/{thread_id}/", renders)))
        if "moderation" in cases:
            seconds_pending = fill_pending(pending, embedder)
            task_vacuum()
            results.append(("moderation", time_renders("/console/moderation/", renders)))
    finally:
        from django.db import connections

        connections.close_all()
        if backend == "postgres":
            drop_postgres()
    for case_name, timings in results:
        p50 = statistics.median(timings)
        p95 = sorted(timings)[max(0, round(0.95 * len(timings)) - 1)]
        if case_name == "thread":
            target, what = TARGET_P95_MS, f"thread page with {messages:,} messages"
            stored, case = seconds, f"thread page, {messages:,} messages"
        else:
            target = TARGET_MODERATION_P95_MS
            what = f"moderation queue, {pending} pending, embedder {embedder or 'none'}"
            stored, case = seconds_pending, f"moderation queue, {pending} pending entries"
        verdict = "ok" if p95 <= target else "MISSED"
        print(
            f"{backend:<8} {what} (stored in {stored:.1f}s): render p50={p50:.1f}ms "
            f"p95={p95:.1f}ms [{verdict}, target p95 <= {target} ms] over {renders} renders"
        )
        record("console_render", backend, case, "p95", p95, "ms", ("<=", target))
        record("console_render", backend, case, "p50", p50, "ms")


def fill_thread(count: int) -> tuple[str, float]:
    """Store one thread of `count` messages in runs of 10, in batches; return its id and time."""
    from apps.runstate.services import (
        checkpoint_create,
        checkpoint_resume,
        plan_put,
        snapshot_put,
    )
    from apps.tenancy.services import agent_get_or_create, project_get_or_create
    from apps.threads.services import (
        MessageInput,
        run_finish,
        run_start,
        thread_append_messages,
        thread_resolve_or_create,
    )

    started = time.perf_counter()
    project, _ = project_get_or_create(slug="bench")
    agent, _ = agent_get_or_create(project=project, slug="bench")
    thread, _ = thread_resolve_or_create(agent=agent, resource_id="user-1", title="Long thread")
    plan_put(
        thread=thread, expected_version=0, fields={"goal": "Answer", "steps": [{"title": "a"}]}
    )
    batch: list = []
    runs = []
    for number in range(count):
        if number % 10 == 0:
            runs.append(run_start(thread=thread, name=f"turn {number // 10}"))
        batch.append(message_input(MessageInput, number, runs[-1].id))
        if len(batch) == 500:
            thread_append_messages(agent=agent, thread_id=thread.id, items=batch)
            batch = []
    if batch:
        thread_append_messages(agent=agent, thread_id=thread.id, items=batch)
    for number, run in enumerate(runs[:-1]):
        failed = number % 7 == 6
        run_finish(
            run=run,
            status="failed" if failed else "succeeded",
            summary="" if failed else "answered",
            error="carrier API answered 503 three times" if failed else "",
        )
    run = runs[-1]
    resumed = checkpoint_create(run=run, state={"step": 2}, reason="approval")
    checkpoint_resume(checkpoint=resumed, resume_input={"approved": True}, actor="user:bench")
    checkpoint_create(run=run, state={"step": 3}, reason="approval")
    snapshot_put(run=run, tree={"agent": "orchestrator", "children": [{"agent": "worker"}]})
    return str(thread.id), time.perf_counter() - started


def message_input(message_input_class, number: int, run_id):
    """Return the number-th message: a user turn, a tool call, its result or an answer."""
    kind = number % 4
    call_id = f"call_{number - number % 4 + 1}"
    if kind == 1:
        arguments = json.dumps({"customer": number, "filters": {"status": "open", "limit": 20}})
        return message_input_class(
            role="assistant",
            kind="tool_call",
            name="search_orders",
            payload={"id": call_id, "arguments": arguments},
            run_id=run_id,
        )
    if kind == 2:
        failed = number % 13 == 2
        result = (
            {"status": 429, "error": "rate limited"}
            if failed
            else {"orders": [{"id": number * 10 + i, "status": "open"} for i in range(number % 7)]}
        )
        return message_input_class(
            role="tool",
            kind="tool_result",
            name="search_orders",
            content=json.dumps(result),
            payload={"tool_call_id": call_id, **({"status": 429} if failed else {})},
            run_id=run_id,
        )
    role = "user" if kind == 0 else "assistant"
    text = f"Message {number}: the customer asked about order {number * 13 % 997} and delivery."
    return message_input_class(role=role, content=text, run_id=run_id)


def fill_pending(count: int, embedder: str) -> float:
    """Store `count` pending entries from two agents, each quoting a message of its own short
    thread (as extraction and agents' proposals do), embedded by `embedder` when one is named;
    return the seconds it took."""
    from apps.episodic.services import entry_create
    from apps.jobs.services import job_run_pending
    from apps.memconfig.services import config_update
    from apps.tenancy.services import agent_get_or_create, project_get_or_create
    from apps.threads.services import (
        MessageInput,
        thread_append_messages,
        thread_resolve_or_create,
    )

    started = time.perf_counter()
    project, _ = project_get_or_create(slug="bench-moderation")
    agents = [agent_get_or_create(project=project, slug=f"agent-{n}")[0] for n in range(2)]
    if embedder:
        changes = {"embedder_model": embedder, "embedder_dimensions": 384}
        config_update(project=project, changes=changes, changed_by="bench")
    for number in range(count):
        agent = agents[number % 2]
        thread, _ = thread_resolve_or_create(
            agent=agent, resource_id=f"customer-{number % 7}", title=f"Support {number}"
        )
        said = f"My order {1000 + number} was delivered to Lindenstrasse {number} in Berlin."
        turns = [("user", f"Hello, question {number}."), ("assistant", "Sure, go ahead.")]
        turns += [("user", said), ("assistant", f"Noted: order {1000 + number}.")]
        stored = thread_append_messages(
            agent=agent,
            thread_id=thread.id,
            items=[MessageInput(role=role, content=text) for role, text in turns],
        )
        entry_create(
            agent=agent,
            resource=thread.resource,
            content=f"Order {1000 + number} goes to Lindenstrasse {number}, Berlin.",
            source="user_assertion",
            evidence=f"delivered to Lindenstrasse {number} in Berlin",
            thread=thread,
            message=stored[2].message,
            actor="bench",
        )
    job_run_pending()  # embeds the messages and entries when an embedder is set
    return time.perf_counter() - started


def time_renders(url: str, renders: int) -> list[float]:
    """Render the page at url `renders` times (after one warm-up); return milliseconds each."""
    from django.contrib.auth.models import User
    from django.test import Client

    user = User.objects.filter(username="bench").first() or User.objects.create_superuser(
        username="bench", password="bench"
    )
    client = Client()
    client.force_login(user)
    assert client.get(url).status_code == 200
    timings = []
    for _ in range(renders):
        started = time.perf_counter()
        response = client.get(url)
        timings.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200
    return timings


def recreate_postgres() -> None:
    """Drop and create the benchmark database."""
    import psycopg

    with psycopg.connect(f"{PG_SERVER}/postgres", autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {PG_NAME} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {PG_NAME}")


def drop_postgres() -> None:
    """Remove the benchmark database."""
    import psycopg

    with psycopg.connect(f"{PG_SERVER}/postgres", autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {PG_NAME} WITH (FORCE)")


if __name__ == "__main__":
    main()
