"""Consolidation throughput with the extractive fallback: messages judged per second.

Builds --threads threads of --messages messages each (user statements, acknowledgements and
greetings, questions, assistant outcomes, tool results with and without errors; every fourth
user statement repeats an earlier one, so dedupe has work), in-process on a fresh database with
no model endpoint, then runs the consolidation job for every thread one after another, as one
worker would, and times it.

Prints:
  messages judged    messages outside the short-term window that consolidation read
  entries created    consolidated entries stored (after hash dedupe), and duplicates found
  throughput         messages judged per second, and per thread the median and worst time
  rerun              the same threads again: nothing new to judge, so the cost of the check

With --multisession it loads instead the labelled multi-session conversations
(bench/data/multisession_set.json: 12 conversations of ordinary talk, 4,008 messages, one thread
each, sessions apart in time) and prints how much consolidation keeps of ordinary conversation:
  entries per 100 messages   consolidated entries stored per 100 messages judged (target ≤ 10)
  labelled user turns kept   of the user turns that answer one of the set's questions (what a
                             later conversation needed), the share an entry quotes or merged

Run: .venv/bin/python bench/consolidation.py [--threads 20] [--messages 500]
     [--database-url postgres://postgres@127.0.0.1:5432/bench_consolidation]   (an empty DB)
     .venv/bin/python bench/consolidation.py --multisession [--database-url …]
A tiny size checks that it works: --threads 2 --messages 40
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from common import record  # bench/, the script's directory, is on sys.path

ROOT = Path(__file__).resolve().parent.parent

STATEMENTS = [
    "Our production database is PostgreSQL {n} on host db-{n}.",
    "We deploy service svc-{n} every Tuesday at 09:00 UTC.",
    "The billing export for region r-{n} runs nightly at 02:00.",
    "Customer account A-{n} is on the enterprise plan since March.",
    "The on-call rotation for team t-{n} changes every Monday.",
]
TRIVIA = ["ok", "thanks!", "got it", "Hi there", "great, thank you", "sounds good", "bye"]
QUESTIONS = ["Can you check the logs?", "What is the status of ticket {n}?", "Is it up?"]
OUTCOMES = [
    "I deployed release v{n}.2 to staging and the smoke tests passed.",
    "Let me look into that for you.",
    "We decided to move the nightly job {n} to 03:00 UTC.",
]


def conversation(count: int, seed: int) -> list[dict]:
    """Return count messages of a support conversation, varied by seed."""
    messages = []
    for index in range(count):
        n = seed * 1000 + index
        match index % 6:
            case 0:
                repeat = n if index % 24 else seed * 1000  # every fourth statement repeats
                text = STATEMENTS[index % len(STATEMENTS)].format(n=repeat)
                messages.append({"role": "user", "content": text})
            case 1:
                messages.append({"role": "assistant", "content": OUTCOMES[n % len(OUTCOMES)]})
            case 2:
                messages.append({"role": "user", "content": TRIVIA[n % len(TRIVIA)]})
            case 3:
                call = {"role": "assistant", "kind": "tool_call", "name": "lookup"}
                messages.append({**call, "payload": {"arguments": {"id": n}}})
            case 4:
                failed = n % 5 == 0
                content = f"Error: HTTP 503 from billing for {n}" if failed else "ok"
                messages.append(
                    {"role": "tool", "kind": "tool_result", "name": "lookup", "content": content}
                )
            case 5:
                question = QUESTIONS[n % len(QUESTIONS)].format(n=n)
                messages.append({"role": "user", "content": question})
    return messages


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=20)
    parser.add_argument("--messages", type=int, default=500)
    parser.add_argument("--database-url", default="", help="An empty database; SQLite if none.")
    parser.add_argument(
        "--multisession", action="store_true", help="The labelled conversations instead."
    )
    args = parser.parse_args()
    setup_django(args.database_url)
    if args.multisession:
        run_multisession(args)
    else:
        run(args)


def setup_django(database_url: str) -> None:
    data_dir = tempfile.mkdtemp(prefix="mc-bench-consolidation-")
    os.environ.update(DATA_DIR=data_dir, SECRET_KEY="bench", ALLOWED_HOSTS="testserver")
    for name in ("DATABASE_URL", "CELERY_BROKER_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        os.environ.pop(name, None)  # no broker, no model: the extractive fallback
    if database_url:
        os.environ["DATABASE_URL"] = database_url
    os.environ["DJANGO_SETTINGS_MODULE"] = "memory_console.settings"
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def run(args) -> None:
    from apps.episodic.consolidation import thread_consolidate_now
    from apps.memconfig.selectors import config_effective
    from apps.tenancy.services import agent_get_or_create, project_get_or_create
    from apps.threads.selectors import thread_get
    from apps.threads.services import MessageInput, thread_append_messages, thread_resolve_or_create

    project, _ = project_get_or_create(slug="bench-consolidation")
    agent, _ = agent_get_or_create(project=project, slug="bench")
    thread_ids = []
    for number in range(args.threads):
        thread, _ = thread_resolve_or_create(agent=agent, resource_id=f"user-{number % 5}")
        messages = conversation(args.messages, number)
        for start in range(0, len(messages), 100):
            items = [MessageInput(**message) for message in messages[start : start + 100]]
            thread_append_messages(agent=agent, thread_id=thread.id, items=items)
        thread_ids.append(thread.id)
    window = config_effective(agent=agent)["short_term_limit"]

    def consolidate_all():
        seconds, reports = [], []
        for thread_id in thread_ids:
            thread = thread_get(agent=agent, thread_id=thread_id)
            started = time.perf_counter()
            reports.append(thread_consolidate_now(thread=thread))
            seconds.append(time.perf_counter() - started)
        return seconds, reports

    seconds, reports = consolidate_all()
    judged = sum(report.messages for report in reports)
    total = sum(seconds)
    figure("threads x messages", f"{args.threads} x {args.messages} (window {window})")
    figure("messages judged", judged)
    figure(
        "entries created",
        f"{sum(r.created for r in reports)} (+{sum(r.duplicates for r in reports)} duplicates)",
    )
    figure("throughput", f"{judged / total:.0f} messages/s ({total:.2f} s)")
    backend = "postgres" if args.database_url.startswith("postgres") else "sqlite"
    case = f"{args.threads} threads x {args.messages} messages"
    record("consolidation", backend, case, "throughput", judged / total, "msg/s")
    figure(
        "per thread p50 / max",
        f"{statistics.median(seconds) * 1000:.0f} / {max(seconds) * 1000:.0f} ms",
    )
    again, reports = consolidate_all()
    assert sum(report.created for report in reports) == 0, "a rerun created entries"
    figure("rerun per thread p50", f"{statistics.median(again) * 1000:.1f} ms (nothing new)")


def run_multisession(args) -> None:
    from datetime import datetime

    from apps.episodic.consolidation import thread_consolidate_now
    from apps.episodic.models import MemoryEntry
    from apps.tenancy.services import agent_get_or_create, project_get_or_create
    from apps.threads.selectors import thread_get
    from apps.threads.services import MessageInput, thread_append_messages, thread_resolve_or_create

    data = json.loads((ROOT / "bench" / "data" / "multisession_set.json").read_text())
    answering = {
        (relevant["session"], relevant["turn"])
        for question in data["questions"]
        for relevant in question["relevant"]
        if relevant["grade"] == 2
    }
    project, _ = project_get_or_create(slug="bench-consolidation")
    agent, _ = agent_get_or_create(project=project, slug="multisession")
    judged = created = labelled = labelled_kept = 0
    seconds = 0.0
    for conversation in data["conversations"]:
        thread, _ = thread_resolve_or_create(agent=agent, resource_id=conversation["resource"])
        turns = [
            (session["id"], index, turn)
            for session in conversation["sessions"]
            for index, turn in enumerate(session["turns"])
        ]
        seqs = {}
        for start in range(0, len(turns), 100):
            part = turns[start : start + 100]
            items = [
                MessageInput(
                    role=turn["role"],
                    content=turn["content"],
                    name=turn.get("name", ""),
                    created_at=datetime.fromisoformat(turn["created_at"]),
                )
                for _, _, turn in part
            ]
            stored = thread_append_messages(agent=agent, thread_id=thread.id, items=items)
            for (session, index, _), appended in zip(part, stored, strict=True):
                seqs[appended.message.seq] = (session, index)
        started = time.perf_counter()
        report = thread_consolidate_now(thread=thread_get(agent=agent, thread_id=thread.id))
        seconds += time.perf_counter() - started
        judged += report.messages
        created += report.created
        kept = set()
        for entry in MemoryEntry.objects.filter(thread_id=thread.id, kind="consolidated"):
            kept.add(entry.metadata.get("first_seq"))
            kept.update(entry.metadata.get("repeated_at", []))
        for seq, (session, index) in seqs.items():
            turn = conversation_turn(conversation, session, index)
            if (session, index) in answering and turn["role"] == "user" and seq <= report.last_seq:
                labelled += 1
                labelled_kept += seq in kept
    per_100 = 100 * created / judged
    figure("conversations", f"{len(data['conversations'])} ({judged} messages judged)")
    figure("entries created", created)
    figure("entries per 100 messages", f"{per_100:.1f}")
    figure("labelled user turns kept", f"{labelled_kept}/{labelled}")
    figure("throughput", f"{judged / seconds:.0f} messages/s ({seconds:.2f} s)")
    backend = "postgres" if args.database_url.startswith("postgres") else "sqlite"
    case = "multi-session conversations"
    record("consolidation", backend, case, "entries per 100 messages", per_100, "", ("<=", 10))


def conversation_turn(conversation: dict, session_id: str, index: int) -> dict:
    session = next(s for s in conversation["sessions"] if s["id"] == session_id)
    return session["turns"][index]


def figure(name: str, value) -> None:
    print(f"{name:<24} {value}")


if __name__ == "__main__":
    main()
