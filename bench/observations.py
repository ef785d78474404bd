"""Observational memory benchmark: extractive compression and observation lag on a tool loop.

Builds the 300-message tool loop of tests/observations/toolloop.py (tool calls with JSON
arguments, ~500-token JSON results, 429/503 errors and retries, user requests) in-process on a
temporary SQLite database with no model endpoint, appending it in batches of --batch messages as
an agent would and running the background jobs after each batch, as an idle worker would.

Prints:
  compression   source message tokens / observation tokens, over every observation the
                Observer wrote (the extractive digest; reflections excluded)
  lag           messages not yet observed after an append once the jobs ran (last_seq − K),
                in steady state (after the first observation): mean and max, and at the end
  lag beyond window   the same minus the recent window the Observer leaves alone by design

Run: .venv/bin/python bench/observations.py [--observer-tokens 30000] [--window 20] [--batch 10]
"""

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from common import record  # bench/, the script's directory, is on sys.path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=300)
    parser.add_argument("--observer-tokens", type=int, default=30_000)
    parser.add_argument("--reflector-tokens", type=int, default=40_000)
    parser.add_argument("--window", type=int, default=20)
    parser.add_argument("--batch", type=int, default=10)
    args = parser.parse_args()
    setup_django()
    run(args)


def setup_django() -> None:
    data_dir = tempfile.mkdtemp(prefix="mc-bench-observations-")
    os.environ.update(DATA_DIR=data_dir, SECRET_KEY="bench", ALLOWED_HOSTS="testserver")
    for name in ("DATABASE_URL", "CELERY_BROKER_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        os.environ.pop(name, None)  # SQLite, no broker, no model: the extractive path
    os.environ["DJANGO_SETTINGS_MODULE"] = "memory_console.settings"
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def run(args) -> None:
    from apps.jobs.services import job_run_pending
    from apps.memconfig.services import config_update
    from apps.observations.models import Observation
    from apps.observations.selectors import observed_up_to
    from apps.tenancy.services import agent_get_or_create, project_get_or_create
    from apps.threads.selectors import thread_get
    from apps.threads.services import MessageInput, thread_append_messages, thread_resolve_or_create
    from tests.observations.toolloop import tool_loop

    project, _ = project_get_or_create(slug="bench")
    agent, _ = agent_get_or_create(project=project, slug="bench")
    config_update(
        agent=agent,
        changed_by="bench",
        changes={
            "observer_message_tokens": args.observer_tokens,
            "reflector_observation_tokens": args.reflector_tokens,
            "recent_window": args.window,
        },
    )
    thread, _ = thread_resolve_or_create(agent=agent)
    loop = tool_loop(args.messages)
    lags, job_seconds = [], []
    for start in range(0, len(loop), args.batch):
        items = [MessageInput(**message) for message in loop[start : start + args.batch]]
        thread_append_messages(agent=agent, thread_id=thread.id, items=items)
        started = time.perf_counter()
        if job_run_pending():
            job_seconds.append(time.perf_counter() - started)
        current = thread_get(agent=agent, thread_id=thread.id)
        observed = observed_up_to(thread=current)
        if observed:
            lags.append(current.last_seq - observed)

    observer_rows = Observation.objects.filter(thread=thread, is_reflection=False)
    reflections = Observation.objects.filter(thread=thread, is_reflection=True).count()
    source = sum(row.message_tokens for row in observer_rows)
    written = sum(row.tokens for row in observer_rows)
    current = thread_get(agent=agent, thread_id=thread.id)
    figure("messages", current.last_seq)
    figure("thread tokens", current.token_count)
    figure("observations written", observer_rows.count())
    figure("reflections", reflections)
    figure("compression", f"{source / written:.1f}x ({source} -> {written} tokens)")
    record("observations", "sqlite", "tool loop", "compression", source / written, "x")
    if lags:
        beyond = [max(0, lag - args.window) for lag in lags]
        figure("lag mean / max / end", f"{statistics.mean(lags):.1f} / {max(lags)} / {lags[-1]}")
        figure("lag beyond window", f"{statistics.mean(beyond):.1f} / {max(beyond)} / {beyond[-1]}")
        record("observations", "sqlite", "tool loop", "lag mean", statistics.mean(lags), "msgs")
        record("observations", "sqlite", "tool loop", "lag beyond window max", max(beyond), "msgs")
    if job_seconds:
        p50, worst = statistics.median(job_seconds) * 1000, max(job_seconds) * 1000
        figure("job ms p50 / max", f"{p50:.0f} / {worst:.0f}")
        record("observations", "sqlite", "tool loop", "job p50", p50, "ms")


def figure(name: str, value) -> None:
    print(f"{name:<24} {value}")


if __name__ == "__main__":
    main()
