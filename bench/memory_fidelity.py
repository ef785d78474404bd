"""Memory fidelity: how much memory formed without a model shrinks, and what it keeps.

Three corpora, built deterministically (the same every run):

- tool loop: 300 messages of an agent calling tools, logged as examples/agent_loop.py logs
  them: the call with its arguments, the result's output in `content` (~300 tokens of order
  JSON) and the call's id in `payload`; failures as results whose text says so
  ({"status": 502, …}, {"ok": false, …}, "Error: …"), retried; user requests now and then;
- conversations: the labelled multi-session set (bench/data/multisession_set.json, 12
  conversations of 309-358 messages between people and an assistant, over weeks);
- support chat: a customer and an agent over orders, amounts, URLs and versions.

Each is appended through the service layer in batches, one thread per conversation, with the
observer at --observer-tokens and the reflector at --reflector-tokens (low, so that these
threads are observed and reflected as a long thread is in time), and the background jobs run
after each batch as an idle worker would. The same messages go to a second thread with
context_strategy compaction and compaction_budget_tokens --summary-budget.

Printed per corpus:
  compression   tokens of the messages the active observations cover / tokens of the active
                observations (after reflection: the reflections and the observations written
                since); the observer's alone; the active reflections' alone; the summary's
  summary       its tokens against the budget (the most of any version)
  retention     the share of the source's items found whole in the active observations:
                errors (their text), user requests (user sentences that ask: a question or an
                instruction, judged by the rule below, not by the observer's), identifiers
                (ids, URLs, file names; extractive.identifiers_in), numbers (two digits or more,
                or with a decimal point or separator) and URLs — each in what users and agents
                said and did (requests, calls and their arguments, errors, replies); and apart,
                the identifiers of successful tool results (a result's bulk data is cut to its
                first identifiers by design: recall and search find the rest)
The bench's request rule: a user sentence ending with "?" or starting with a verb of asking
("please", "can you", "give", "tell", "show", …) — simpler than the observer's own.

Run it:
    .venv/bin/python bench/memory_fidelity.py [--backend sqlite|postgres|both] [--quick]
"""

import argparse
import json
import random
import re
import sys
import time
from datetime import date, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/ is not a package
from common import LOADER_ARG, backend_environment, django_setup, loader_run, log, manage, record
from multisession_data import SET_PATH

SCRIPT = Path(__file__).resolve()
PG_DATABASE = "memory_console_bench_fidelity"
_ASKS = re.compile(
    r"^(please|can you|could you|would you|give|tell|show|explain|write|suggest|recommend|"
    r"list|find|check|send|book|remind|add|remove|update|translate|compare|help)\b",
    re.IGNORECASE,
)
_URL = re.compile(r"https?://[^\s\"'<>)\]},]+")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,:]\d+)+(?![\w])|(?<![\w.])\d{2,}(?![\w])")


# --- Corpora ------------------------------------------------------------------------------


def tool_loop(count: int = 300, seed: int = 11) -> list[dict]:
    """The agent loop's way of logging tools: output in content, the call's id in payload."""
    rng = random.Random(seed)
    failures = [
        '{"status": 502, "error": "Bad Gateway from payments-eu-2"}',
        '{"ok": false, "reason": "card_declined", "charge": "ch_{n}"}',
        "Error: timeout after 30s calling https://api.example.com/v1/workflows/wf-{n}/runs",
    ]
    messages, step = [], 0
    while len(messages) < count:
        step += 1
        if step % 10 == 1:
            messages.append(
                {
                    "role": "user",
                    "content": f"Please refund order ORD-{7000 + step} (EUR {step * 3}.50) and "
                    f"tell me when https://shop.example.com/orders/{7000 + step} shows it.",
                }
            )
        tool = ("lookup_order", "refund_payment", "notify_customer")[step % 3]
        arguments = {"order": f"ORD-{7000 + step}", "amount": f"{step * 3}.50", "v": "4.2.1"}
        tries = 1 + (step % 4 == 2) * (1 + step % 2)
        for attempt in range(tries):
            call_id = f"call_{step}_{attempt}"
            messages.append(
                {
                    "role": "assistant",
                    "kind": "tool_call",
                    "name": tool,
                    "content": json.dumps(arguments),
                    "payload": {"tool_call_id": call_id, "arguments": arguments},
                }
            )
            failed = attempt < tries - 1
            output = (
                failures[step % 3].replace("{n}", str(step))
                if failed
                else json.dumps(
                    {
                        "status": 200,
                        "order": f"ORD-{7000 + step}",
                        "items": [
                            {
                                "sku": f"SKU-{rng.randint(100, 999)}",
                                "qty": rng.randint(1, 9),
                                "title": rng.choice(["USB-C cable", "desk lamp", "mouse pad"]),
                                "warehouse": rng.choice(["Leipzig", "Lyon", "Leeds"]),
                                "shipped": f"2025-03-{rng.randint(1, 28):02d}",
                                "status": rng.choice(["packed", "in transit", "delivered"]),
                            }
                            for _ in range(8)
                        ],
                    }
                )
            )
            messages.append(
                {
                    "role": "tool",
                    "kind": "tool_result",
                    "name": tool,
                    "content": output,
                    "payload": {"tool_call_id": call_id},
                }
            )
        if step % 5 == 0:
            messages.append(
                {"role": "assistant", "content": f"Refunded ORD-{7000 + step}; next one."}
            )
    return messages[:count]


def conversations() -> list[list[dict]]:
    data = json.loads(SET_PATH.read_text())
    out = []
    for conversation in data["conversations"]:
        turns = [turn for session in conversation["sessions"] for turn in session["turns"]]
        out.append(
            [
                {
                    "role": turn["role"],
                    "content": turn["content"],
                    "name": turn.get("name", ""),
                    "created_at": turn["created_at"],
                }
                for turn in turns
            ]
        )
    return out


def support_chat(days: int = 40, seed: int = 5) -> list[dict]:
    """A customer and an agent over orders, amounts, URLs and versions, a session a day."""
    rng = random.Random(seed)
    small_talk = ["Hi!", "Thanks, that helps.", "Great, thank you so much!", "Ok, got it.", "Bye!"]
    products = ["router AX-3000", "camera C-920", "dock TB4-Pro", "SSD 2TB NV-2"]
    messages = []
    for day in range(days):
        when = f"{date(2025, 3, 1) + timedelta(days=day)}T09:"
        order = f"A-{48210 + day * 7}"
        amount = f"{rng.randint(20, 900)}.{rng.randint(0, 99):02d}"
        product = rng.choice(products)
        version = f"{rng.randint(1, 5)}.{rng.randint(0, 9)}.{rng.randint(0, 20)}"
        lines = [
            (
                "user",
                rng.choice(small_talk[:1]) + f" My order {order} for the {product} "
                f"({amount} EUR) has not arrived.",
            ),
            (
                "assistant",
                f"Sorry about that! I checked {order}: it left our warehouse in "
                f"Leipzig on {date(2025, 3, 1) + timedelta(days=day)} and the tracking page is "
                f"https://track.example.com/{order}. It should arrive within 3 working days.",
            ),
            (
                "user",
                f"Can you also tell me if firmware {version} fixes the Wi-Fi drops? "
                "I'm on 10.0.0.1 at home.",
            ),
            (
                "assistant",
                f"Yes: {version} fixes the 5 GHz drop on {product}; release notes at "
                f"https://support.example.com/fw/{version}. Restart after updating, please.",
            ),
            ("user", rng.choice(small_talk[1:4])),
            ("assistant", "You're welcome! Anything else I can do for you today?"),
            ("user", f"Please refund the {amount} EUR shipping fee to my card ending 4{day}21."),
            (
                "assistant",
                f"Done: refund R-{9100 + day} of {amount} EUR is on its way; banks take "
                "2.5 days on average.",
            ),
            ("user", rng.choice(small_talk[3:])),
        ]
        for index, (role, content) in enumerate(lines):
            messages.append(
                {"role": role, "content": content, "created_at": f"{when}{index * 3:02d}:00+00:00"}
            )
    return messages


CORPORA = {
    "tool loop": lambda: [tool_loop()],
    "conversations": conversations,
    "support chat": lambda: [support_chat()],
}


# --- Measuring (inside Django) ------------------------------------------------------------


def task_measure(corpus: str, observer_tokens: int, reflector_tokens: int, budget: int) -> dict:
    from apps.jobs.services import job_run_pending
    from apps.memconfig.services import config_update
    from apps.observations.models import Observation, ThreadSummary
    from apps.tenancy.services import agent_get_or_create, project_get_or_create
    from apps.threads.models import Message
    from apps.threads.services import MessageInput, thread_append_messages, thread_resolve_or_create

    project, _ = project_get_or_create(slug="fidelity")
    observed_agent, _ = agent_get_or_create(project=project, slug=f"observed-{len(corpus)}")
    compacted_agent, _ = agent_get_or_create(project=project, slug=f"compacted-{len(corpus)}")
    config_update(
        agent=observed_agent,
        changed_by="bench",
        changes={
            "observer_message_tokens": observer_tokens,
            "reflector_observation_tokens": reflector_tokens,
            "episodic_extraction_enabled": False,
        },
    )
    config_update(
        agent=compacted_agent,
        changed_by="bench",
        changes={
            "context_strategy": "compaction",
            "compaction_budget_tokens": budget,
            "episodic_extraction_enabled": False,
        },
    )
    totals = {"source": 0, "memory": 0, "observer_source": 0, "observer_memory": 0}
    totals |= {"reflected_source": 0, "reflected": 0}
    totals |= {"summary_source": 0, "summary": 0, "summary_max": 0}
    items = {name: [0, 0] for name in ("errors", "requests", "identifiers", "numbers", "urls")}
    items["result identifiers"] = [0, 0]
    started = time.perf_counter()
    for messages in CORPORA[corpus]():
        threads = []
        for agent in (observed_agent, compacted_agent):
            thread, _ = thread_resolve_or_create(agent=agent)
            for start in range(0, len(messages), 20):
                batch = [_input(MessageInput, m) for m in messages[start : start + 20]]
                thread_append_messages(agent=agent, thread_id=thread.id, items=batch)
                job_run_pending()
            threads.append(thread)
        observed, compacted = threads
        active = list(Observation.objects.filter(thread=observed, superseded_by__isnull=True))
        covered = max((row.last_seq for row in active), default=0)
        rows = list(Message.objects.filter(thread=observed).order_by("seq"))
        source = [row for row in rows if row.seq <= covered]
        memory = "\n".join(row.content for row in sorted(active, key=lambda r: r.first_seq))
        totals["source"] += sum(row.token_count for row in source)
        totals["memory"] += sum(row.tokens for row in active)
        reflections = [row for row in active if row.is_reflection]
        totals["reflected_source"] += sum(row.message_tokens for row in reflections)
        totals["reflected"] += sum(row.tokens for row in reflections)
        written = Observation.objects.filter(thread=observed, is_reflection=False)
        totals["observer_source"] += sum(row.message_tokens for row in written)
        totals["observer_memory"] += sum(row.tokens for row in written)
        summaries = ThreadSummary.objects.filter(thread=compacted).order_by("-version")
        if summaries:
            totals["summary_source"] += summaries[0].message_tokens
            totals["summary"] += summaries[0].tokens
            totals["summary_max"] = max(totals["summary_max"], max(s.tokens for s in summaries))
        _retention(source, memory, items)
    return {"totals": totals, "items": items, "seconds": time.perf_counter() - started}


def _input(message_input, message: dict):
    if "created_at" in message:
        message = message | {"created_at": datetime.fromisoformat(message["created_at"])}
    return message_input(**message)


def _retention(source, memory: str, items: dict) -> None:
    from apps.core.sentences import sentences
    from apps.observations.extractive import identifiers_in
    from apps.threads.outcome import message_outcome

    folded = " ".join(memory.split())

    def count(name, token):
        items[name][0] += 1
        items[name][1] += token in folded

    for message in source:
        text = message.content or ""
        outcome = message_outcome(message)
        if outcome.error:
            count("errors", " ".join(text.split()))
            continue
        if message.kind == "tool_result":
            for token in identifiers_in(text):
                count("result identifiers", token)
            continue
        if message.kind == "tool_call" and message.payload is not None:
            text = json.dumps(message.payload.get("arguments", message.payload))
        if message.role == "user":
            for sentence in sentences(text):
                if sentence.endswith("?") or _ASKS.match(sentence):
                    count("requests", " ".join(sentence.split()))
        urls = set(_URL.findall(text))
        for token in urls:
            count("urls", token.rstrip(".,;:"))
        for token in identifiers_in(text) - urls:
            count("identifiers", token)
        for token in set(_NUMBER.findall(text)):
            count("numbers", token)


# --- Driver -------------------------------------------------------------------------------


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == LOADER_ARG:
        django_setup()
        spec = json.loads(sys.argv[2])
        print(json.dumps(task_measure(**{k: v for k, v in spec.items() if k != "task"})))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=("sqlite", "postgres", "both"), default="both")
    parser.add_argument("--observer-tokens", type=int, default=2000)
    # The defaults' ratio (reflector 40k for observer 30k), at a scale these threads reach.
    parser.add_argument("--reflector-tokens", type=int, default=2700)
    parser.add_argument("--summary-budget", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="the tool loop and support chat")
    args = parser.parse_args()
    backends = ("sqlite", "postgres") if args.backend == "both" else (args.backend,)
    corpora = [name for name in CORPORA if not (args.quick and name == "conversations")]
    for backend in backends:
        with backend_environment(backend, PG_DATABASE, prefix="mc-bench-fidelity-") as env:
            manage(env, "migrate", "--noinput")
            for corpus in corpora:
                log(f"{backend}: {corpus}")
                result = loader_run(
                    SCRIPT,
                    env,
                    "measure",
                    corpus=corpus,
                    observer_tokens=args.observer_tokens,
                    reflector_tokens=args.reflector_tokens,
                    budget=args.summary_budget,
                )
                report(backend, corpus, result, args.summary_budget)


def report(backend: str, corpus: str, result: dict, budget: int) -> None:
    totals, items = result["totals"], result["items"]
    compression = totals["source"] / max(1, totals["memory"])
    observer = totals["observer_source"] / max(1, totals["observer_memory"])
    summary = totals["summary_source"] / max(1, totals["summary"])
    reflected = totals["reflected_source"] / max(1, totals["reflected"])
    print(f"\n{backend}, {corpus} ({result['seconds']:.0f} s)")
    print(
        f"  compression after reflection {compression:.1f}x ({totals['source']:,} -> "
        f"{totals['memory']:,} tokens); observer alone {observer:.1f}x; the active reflections "
        f"alone {reflected:.1f}x; summary {summary:.1f}x"
    )
    print(f"  summary tokens at most {totals['summary_max']:,} (budget {budget:,})")
    target = 5 if corpus == "tool loop" else 3
    record("memory_fidelity", backend, corpus, "compression", compression, "x", (">=", target))
    record(
        "memory_fidelity",
        backend,
        corpus,
        "summary max",
        totals["summary_max"],
        "tokens",
        ("<=", budget),
    )
    for name, (total, kept) in items.items():
        if total:
            share = 100 * kept / total
            print(f"  retention {name:<19} {share:5.1f} % ({kept}/{total})")
            if name != "result identifiers":
                record(
                    "memory_fidelity", backend, corpus, f"retention {name}", share, "%", (">=", 100)
                )


if __name__ == "__main__":
    main()
