"""Context benchmark: how fast Memory Console assembles a context, measured through HTTP.

It times POST /api/v1/threads/{thread_id}/context, which reads the agent's profile of the end
user and the thread's session memory, the thread's active observations, ranks the agent's
approved entries for that end user and the project's knowledge chunks for the query, optionally
recalls past messages of the thread, takes every message the observations do not cover yet, trims
the whole to max_tokens and stores a snapshot. No LLM is on that path: the observations are
stored beforehand, and no embedder is configured (the default), so entries, knowledge and recall
are ranked lexical + recency.

For each backend it builds a fresh installation: a temporary data directory (SQLite, the embedded
default) or a fresh PostgreSQL database `memory_console_bench_context` on postgres@127.0.0.1:5432,
then `migrate`, one project and agent with `create_agent`, and the data below, loaded through the
service layer in subprocesses (the bench calls itself):

- one thread of --messages messages (default 10,000) of one end user, appended in batches of
  1,000 with `thread_append_messages` (the API's write path, indexing included, minus HTTP);
- --observations active observations (default 500, generation 1) covering seq 1..K with no gap,
  K leaving the last 40 messages unobserved, written as Observation rows (method "extractive",
  prompt_version "bench") of 60-150 tokens of notes quoting the messages they cover, with the
  thread's observation progress at K, as the Observer would leave them;
- --entries approved entries (default 1,000) of the agent and that end user, through
  `entry_create` with episodic_approval_required off for the agent while loading (restored
  to the default afterwards);
- --chunks knowledge chunks (default 100,000) in one knowledge base, as bench/search.py loads
  them (ready documents of 20 chunks, indexed with `index_chunks`);
- the agent's profile of the end user (`profile_put`) and the thread's session memory
  (`session_memory_put`).
Text comes from bench/search.py's seeded generator, so every run loads the same data. On
PostgreSQL the database is VACUUM ANALYZEd after loading, as autovacuum would in time.

Then, for each case, gunicorn with 2 workers x 4 threads (as `make run`) serves it and one
keep-alive client sends --queries context requests one after another, after a warm-up, with
max_tokens --max-tokens (default 32,000). Half the queries are rare terms (generated names and
order numbers from the loaded text), half two or three frequent topic words. Cases:
1. default: the default memory settings (context_strategy observational, semantic recall on,
   the budget planned by the default shares);
2. no recall: the agent's semantic_recall_enabled set to false.
Each reports p50/p95/p99 (target p95 <= 30 ms), the answers' mean tokens, how many answers had
each block non-empty and what trimming left out, then the snapshot table's row count (one row per
request). A case that misses the target (every case with --profile) has its slowest query sent
again in-process with each SQL statement timed (and EXPLAIN ANALYZEd on PostgreSQL).
MEMORY_* and SEARCH_* variables are not passed on: the server runs with the default settings.

Everything is removed afterwards: the server is stopped, the temporary directory deleted and the
PostgreSQL database dropped (--keep leaves both). The client, the server and the database share
the machine's CPUs.

Run it:
    .venv/bin/python bench/context.py [--backend sqlite|postgres|both] [--messages 10000]
        [--observations 500] [--entries 1000] [--chunks 100000] [--queries 200]
        [--max-tokens 32000] [--profile] [--keep]
    .venv/bin/python bench/context.py --messages 500 --chunks 2000 --entries 100 \\
        --observations 50                                # a quick run at a small scale
"""

import argparse
import json
import os
import random
import re
import sys
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from statistics import mean

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/ is not a package
from common import (
    LOADER_ARG,
    Api,
    autoanalyze,
    backend_environment,
    create_agent,
    django_setup,
    elapsed,
    expect_status,
    gunicorn,
    http_floor,
    loader_run,
    loaders_run,
    log,
    manage,
    percentile,
    profile_request,
    task_vacuum,
    verdict,
)
from common import record as record_figure  # record() here notes an answer
from search import (
    CHUNKS_PER_DOCUMENT,
    Query,
    Terms,
    Timeline,
    Vocabulary,
    make_queries,
    task_chunks,
    task_knowledge_base,
    thread_items,
)

PG_DATABASE = "memory_console_bench_context"
SCRIPT = Path(__file__).resolve()
run_loader = partial(loader_run, SCRIPT)  # (env, task, **params): one of this script's tasks
run_loaders = partial(loaders_run, SCRIPT)  # (env, task, specs): one per spec, concurrently
PROJECT, AGENT, END_USER, ACTOR = "context", "bench", "end-user-1", "agent:bench"
APPEND_BATCH = 1000  # messages per thread_append_messages call
UNOBSERVED = 40  # the thread's last messages that no observation covers yet
OBSERVATION_TOKENS = (60, 150)
WARMUP = 20  # requests per case before timing
TARGET_MS = 30.0
BLOCK_NAMES = (
    "user_profile",
    "session_memory",
    "observations",
    "memory",
    "knowledge",
    "recall",
    "recent",
)
# (case, the agent's settings for it): each case keeps the settings of the one before.
CASES = (("default", {}), ("no recall", {"semantic_recall_enabled": False}))
ENTRY_TEMPLATES = [
    "{name} prefers that the {n} report arrives before the {n} review.",
    "The user's {n} account moved to the {n} plan; {name} approved the change.",
    "Order {num} was refunded because the {n} check failed; the user wants a {n} email next time.",
    "The user asked us to {v} the {n} every Friday and to keep the {n} history.",
    "{name} owns the {n} {n}; ask them before you {v} it.",
    "The user's {n} dashboard shows {n} data from the {n} export, cached for an hour.",
    "Last incident: the {n} {n} filled up and the {n} alerts fired late; {name} fixed it.",
    "The user cannot {v} the {n} on mobile and uses the {n} page on a laptop instead.",
    "Decision: {v} the {n} now and {v} the {n} once {name} confirms.",
    "The user works with {name} from the {n} team on {n} and {n} questions.",
]
PROFILE_LINES = [
    "- Role: {n} lead; works with {name} and {name} from the {n} team.",
    "- Prefers short answers with the exact {n} steps, and a link to the {n} page.",
    "- Uses the {n} dashboard daily and the {n} export on Fridays.",
    "- Asked twice to {v} the {n} before the {n} review; expects it done by Thursday.",
    "- Order {num} is still open: the {n} was never sent.",
    "- Dislikes when we {v} the {n} without telling {name} first.",
    "- Runs the {n} console on a laptop; cannot {v} the {n} on mobile.",
]
# "3 item(s) of recall left out …", "233 older observation(s) left out …"; a block that was
# not searched at all ("memory not searched: …") counts as trimmed with no items.
_TRIMMED = re.compile(r"^(\d+) ")

# --- Loading tasks (run inside Django, in a subprocess) --------------------------------------


def loader_main(spec: dict) -> None:
    """Set up Django, run one loading task and print its result as JSON on the last line."""
    django_setup()
    tasks = {
        "prepare": task_prepare,
        "messages": task_messages,
        "observations": task_observations,
        "entries": task_entries,
        "knowledge_base": task_knowledge_base,
        "chunks": task_chunks,
        "memory": task_memory,
        "configure": task_configure,
        "vacuum": task_vacuum,
        "counts": task_counts,
        "profile": task_profile,
    }
    print(json.dumps(tasks[spec.pop("task")](**spec)))


def bench_agent():
    """Return the benchmark's agent, with its project."""
    from apps.tenancy.models import Agent

    return Agent.objects.select_related("project").get(project__slug=PROJECT, slug=AGENT)


def task_prepare() -> dict:
    """Create the end user's thread; return its id."""
    from apps.threads.services import thread_resolve_or_create

    thread, _ = thread_resolve_or_create(agent=bench_agent(), resource_id=END_USER, title="long")
    return {"thread_id": str(thread.id)}


def task_messages(thread_id: str, count: int, seed: int, now: str, days: float) -> dict:
    """Append count messages to the thread in batches, through the service layer."""
    from apps.threads.services import thread_append_messages

    agent, vocab, terms = bench_agent(), Vocabulary(), Terms()
    times, start = Timeline(datetime.fromisoformat(now), days, count), time.perf_counter()
    for first in range(0, count, APPEND_BATCH):
        last = min(count, first + APPEND_BATCH)
        items = thread_items(vocab, terms, seed + first, first, last)
        thread_append_messages(agent=agent, thread_id=thread_id, items=times.stamp(items, first))
        log(f"  loader: {last:,} messages, {elapsed(start)}")
    return terms.to_json()


def task_observations(thread_id: str, count: int, seed: int) -> dict:
    """Store count active observations covering seq 1..K (all but the last UNOBSERVED)."""
    from django.db import transaction

    from apps.observations.models import Method, Observation, ObservationProgress
    from apps.providers.tokens import count_tokens
    from apps.threads.models import Message, Thread

    thread = Thread.objects.get(pk=thread_id)
    covered = thread.last_seq - UNOBSERVED
    messages = list(
        Message.objects.filter(thread=thread, seq__lte=covered)
        .order_by("seq")
        .values_list("seq", "role", "content", "token_count")
    )
    rng, rows = random.Random(seed), []
    for index in range(count):
        first, last = index * covered // count + 1, (index + 1) * covered // count
        stretch = messages[first - 1 : last]  # seqs start at 1 with no gap
        content = observation_text(rng, stretch)
        rows.append(
            Observation(
                thread=thread,
                generation=1,
                first_seq=first,
                last_seq=last,
                content=content,
                tokens=count_tokens(content),
                message_tokens=sum(message[3] for message in stretch),
                method=Method.EXTRACTIVE,
                prompt_version="bench",
            )
        )
    with transaction.atomic():
        Observation.objects.bulk_create(rows)
        ObservationProgress.objects.update_or_create(
            thread=thread,
            defaults={
                "generation": 1,
                "observed_up_to": covered,
                "observed_message_tokens": sum(row.message_tokens for row in rows),
            },
        )
    return {"covered": covered, "tokens": [row.tokens for row in rows]}


def observation_text(rng: random.Random, stretch: list[tuple]) -> str:
    """Return dense notes on a stretch of messages: some of them quoted, about 60-150 tokens."""
    from apps.providers.tokens import count_tokens

    target = rng.randint(*OBSERVATION_TOKENS)
    picked = sorted(rng.sample(range(len(stretch)), min(len(stretch), 10)))
    lines: list[str] = []
    for index in picked:
        seq, role, content, _ = stretch[index]
        room = target - count_tokens("\n".join(lines))
        if room < 8:
            break
        words = f"[#{seq}] {role.capitalize()}: {content}".split()
        while count_tokens(" ".join(words)) > room:
            words.pop()
        lines.append(" ".join(words))
    return "\n".join(lines)


def task_entries(count: int, seed: int) -> dict:
    """Create count approved entries of the agent and end user through entry_create."""
    from apps.episodic.models import EntrySource
    from apps.episodic.services import entry_create
    from apps.memconfig.services import config_update
    from apps.tenancy.models import Resource

    agent, vocab, terms = bench_agent(), Vocabulary(), Terms()
    resource = Resource.objects.get(project=agent.project, external_id=END_USER)
    config_update(agent=agent, changes={"episodic_approval_required": False}, changed_by="bench")
    rng, created, duplicates, start = random.Random(seed), 0, 0, time.perf_counter()
    while created < count:
        content = vocab.fill(rng, rng.choice(ENTRY_TEMPLATES))
        result = entry_create(
            agent=agent, resource=resource, content=content, source=EntrySource.API, actor=ACTOR
        )
        if not result.created:
            duplicates += 1
            continue
        created += 1
        terms.add(content, keep_number=True)
        if created % 250 == 0:
            log(f"  loader: {created:,} entries, {elapsed(start)}")
    # Back to the default (approval required): it plays no part in assembling a context.
    config_update(agent=agent, changes={"episodic_approval_required": None}, changed_by="bench")
    return {**terms.to_json(), "duplicates": duplicates}


def task_memory(thread_id: str, seed: int) -> dict:
    """Write the agent's profile of the end user and the thread's session memory."""
    from apps.profiles.services import profile_put, session_memory_put

    agent, vocab, rng = bench_agent(), Vocabulary(), random.Random(seed)
    lines = [vocab.fill(rng, "# {name}"), ""]
    lines += [vocab.fill(rng, line) for line in PROFILE_LINES]
    lines += ["", "## Open topics"]
    lines += [vocab.fill(rng, "- {n} {n}: waiting for {name} to {v} the {n}.") for _ in range(6)]
    profile = "\n".join(lines)
    profile_put(agent=agent, resource_external_id=END_USER, content=profile, version=0, actor=ACTOR)
    session_memory_put(
        agent=agent,
        thread_id=thread_id,
        objective=vocab.fill(rng, "Get the {n} {n} working again before the {n} review."),
        decisions=[vocab.fill(rng, "{v} the {n} first; {name} handles the {n}.") for _ in range(5)],
        state=vocab.fill(rng, "The {n} is fixed; the {n} export still shows the old {n}."),
        follow_ups=[vocab.fill(rng, "Ask {name} to {v} the {n}.") for _ in range(3)],
        version=0,
        actor=ACTOR,
    )
    return {"profile_chars": len(profile)}


def task_configure(changes: dict) -> dict:
    """Change the agent's memory settings as an operator would."""
    from apps.memconfig.services import config_update

    config_update(agent=bench_agent(), changes=changes, changed_by="bench")
    return {}


def task_counts(thread_id: str) -> dict:
    """Return the rows a context reads from, and the snapshots stored so far."""
    from django.db.models import Count, Sum

    from apps.context.models import ContextSnapshot
    from apps.episodic.models import MemoryEntry
    from apps.knowledge.models import Chunk
    from apps.observations.models import Observation
    from apps.search.models import SearchItem
    from apps.threads.models import Thread

    thread = Thread.objects.get(pk=thread_id)
    active = Observation.objects.filter(thread=thread, superseded_by__isnull=True)
    entries = MemoryEntry.objects.filter(agent__slug=AGENT, resource=thread.resource)
    return {
        "messages": thread.messages.count(),
        "observations": active.count(),
        "observation_tokens": active.aggregate(total=Sum("tokens"))["total"] or 0,
        "entries": dict(entries.values_list("status").annotate(n=Count("id"))),
        "chunks": Chunk.objects.count(),
        "items": dict(SearchItem.objects.values_list("kind").annotate(n=Count("id"))),
        "snapshots": ContextSnapshot.objects.count(),
    }


def task_profile(key: str, thread_id: str, body: dict) -> dict:
    """Send one context request through Django in-process: SQL statements, then functions.

    Besides profile_request's statements, plans and app functions by cumulative time, it lists
    the functions (of any module) that take the most time themselves.
    """
    import cProfile
    import io
    import pstats

    from django.test import Client

    path = f"/api/v1/threads/{thread_id}/context"
    result = profile_request(path, key, body)
    client, headers = Client(HTTP_HOST="127.0.0.1"), {"Authorization": f"Bearer {key}"}
    send = partial(client.post, path, body, content_type="application/json", headers=headers)
    send()  # a new client loads the middleware (WhiteNoise scans the static files) first
    profiler, out = cProfile.Profile(), io.StringIO()
    profiler.runcall(send)
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(15)
    rows = [line for line in out.getvalue().splitlines() if re.match(r"\s+\d", line)]
    return {**result, "own_time": rows}


# --- Loading ------------------------------------------------------------------------------


@dataclass
class Loaded:
    """The loaded thread, the terms its text holds (for queries) and notes on the loading."""

    thread_id: str
    terms: Terms
    notes: list[str]


@contextmanager
def timed(notes: list[str], what: str) -> Iterator[None]:
    """Log what is loading, then note how long it took."""
    log(f"  loading {what}")
    start = time.perf_counter()
    yield
    notes.append(f"{what}: {time.perf_counter() - start:.0f} s")


def load(env: dict[str, str], args: argparse.Namespace, backend: str) -> Loaded:
    """Load the thread, its observations, entries, knowledge, profile and session memory."""
    notes, terms = [], Terms()
    with autoanalyze(env) as analyze_note:
        thread_id = run_loader(env, "prepare")["thread_id"]
        with timed(notes, f"{args.messages:,} messages in batches of {APPEND_BATCH:,}"):
            spec = {"thread_id": thread_id, "count": args.messages, "seed": 300}
            terms.merge(Terms.from_json(run_loader(env, "messages", **spec, now=args.now, days=90)))
        with timed(notes, f"{args.observations:,} observations"):
            spec = {"thread_id": thread_id, "count": args.observations, "seed": 400}
            observed = run_loader(env, "observations", **spec)
        tokens = observed["tokens"]
        notes[-1] += (
            f"; they cover seq 1..{observed['covered']:,} in {sum(tokens):,} tokens, "
            f"{min(tokens)}/{mean(tokens):.0f}/{max(tokens)} min/mean/max each"
        )
        with timed(notes, f"{args.entries:,} approved entries through entry_create"):
            result = run_loader(env, "entries", count=args.entries, seed=500)
            terms.merge(Terms.from_json(result))
        if result["duplicates"]:
            notes[-1] += f" ({result['duplicates']} drawn twice were answered as duplicates)"
        documents = -(-args.chunks // CHUNKS_PER_DOCUMENT)
        loaders = 1 if backend == "sqlite" else args.loaders  # SQLite has one writer at a time
        with timed(notes, f"{documents * CHUNKS_PER_DOCUMENT:,} chunks with {loaders} loaders"):
            run_loader(env, "knowledge_base", project=PROJECT)
            bounds = [documents * i // loaders for i in range(loaders + 1)]
            specs = [
                {"project": PROJECT, "first_doc": low, "last_doc": high, "seed": 5000}
                for low, high in zip(bounds, bounds[1:], strict=False)
                if high > low
            ]
            for result in run_loaders(env, "chunks", specs):
                terms.merge(Terms.from_json(result))
        run_loader(env, "memory", thread_id=thread_id, seed=600)
    if analyze_note:
        notes.append(analyze_note)
    if backend == "postgres":
        notes.append(f"VACUUM ANALYZE after loading: {run_loader(env, 'vacuum')['seconds']:.0f} s")
    return Loaded(thread_id, terms, notes)


# --- Measuring ---------------------------------------------------------------------------------


@dataclass
class Case:
    """One measured case: its settings, and the latency and shape of each answer."""

    name: str
    changes: dict
    first_ms: float = 0.0
    timings: list[tuple[Query, float]] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)
    non_empty: Counter = field(default_factory=Counter)  # block -> answers that showed it
    trimmed: Counter = field(default_factory=Counter)  # block -> answers it was trimmed in
    left_out: Counter = field(default_factory=Counter)  # block -> items left out, summed
    requests: int = 0
    snapshots: int = 0
    machine_load: str = ""
    profile: dict | None = None

    def latencies(self, kind: str = "") -> list[float]:
        """Return the latencies of the queries of a kind (all when empty)."""
        return [ms for query, ms in self.timings if not kind or query.kind == kind]

    def p95(self) -> float:
        return percentile(self.latencies(), 95)


class Client:
    """One keep-alive client of the context endpoint."""

    def __init__(self, api: Api, thread_id: str, max_tokens: int):
        self.session, self.max_tokens = api.session(), max_tokens
        self.url = f"{api.base_url}/api/v1/threads/{thread_id}/context"

    def post(self, query: str) -> tuple[float, dict]:
        """POST one context request; return its latency in ms and the answer."""
        start = time.perf_counter()
        body = {"query": query, "max_tokens": self.max_tokens}
        response = self.session.post(self.url, json=body, timeout=120)
        ms = (time.perf_counter() - start) * 1000
        expect_status(response, 200)
        return ms, response.json()


def record(case: Case, answer: dict) -> None:
    """Note an answer's tokens, its non-empty blocks and what trimming left out."""
    case.tokens.append(answer["tokens"])
    case.non_empty.update(block["name"] for block in answer["blocks"] if block["items"])
    for warning in answer["warnings"]:
        if warning["code"] == "trimmed":
            case.trimmed[warning["block"]] += 1
            counted = _TRIMMED.match(warning["message"])
            case.left_out[warning["block"]] += int(counted.group(1)) if counted else 0


def measure(api: Api, loaded: Loaded, case: Case, args: argparse.Namespace, seed: int) -> None:
    """Time the first request, warm both workers up, then time the queries one after another."""
    vocab = Vocabulary()
    queries = make_queries(args.queries, vocab, loaded.terms, seed)
    warmup = make_queries(WARMUP, vocab, loaded.terms, seed + 1)
    client = Client(api, loaded.thread_id, args.max_tokens)
    case.first_ms, _ = client.post(warmup[0].text)

    def warm(index: int) -> None:
        other = Client(api, loaded.thread_id, args.max_tokens)
        for query in warmup[index::4]:
            other.post(query.text)

    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(warm, range(4)))
    for query in warmup[1:6]:
        client.post(query.text)
    before = os.getloadavg()[0]
    for query in queries:
        ms, answer = client.post(query.text)
        case.timings.append((query, ms))
        record(case, answer)
    case.machine_load = f"{before:.2f} before, {os.getloadavg()[0]:.2f} after"
    case.requests = 1 + len(warmup) + len(warmup[1:6]) + len(queries)


@dataclass
class BackendRun:
    """The measured cases of one backend, with notes on its data."""

    cases: list[Case]
    notes: list[str]


def run_backend(backend: str, args: argparse.Namespace) -> BackendRun:
    """Set up a fresh installation on the backend, load it, then serve and measure each case."""
    log(f"{backend}: fresh database, migrate, create_agent")
    fresh = backend_environment(backend, PG_DATABASE, prefix="mc-bench-context-", keep=args.keep)
    with fresh as base_env:
        # Without MEMORY_* / SEARCH_* overrides: the server runs with the default settings.
        env = {k: v for k, v in base_env.items() if not k.startswith(("MEMORY_", "SEARCH_"))}
        manage(env, "migrate", "--noinput")
        key = create_agent(env, PROJECT, AGENT).strip()
        loaded = load(env, args, backend)
        cases, snapshots = [], 0
        for seed, (name, changes) in enumerate(CASES):
            case = Case(name, changes)
            if changes:
                run_loader(env, "configure", changes=changes)
            with gunicorn(env, args.port) as base_url:  # fresh workers: no cached settings
                if not cases:
                    loaded.notes.append(http_floor(base_url, args.queries))
                log(f"{backend}: measuring {name}: {args.queries} requests after {WARMUP} warm-up")
                measure(Api(base_url, key), loaded, case, args, 100 * seed)
            counts = run_loader(env, "counts", thread_id=loaded.thread_id)
            case.snapshots = counts["snapshots"] - snapshots
            if args.profile or case.p95() > TARGET_MS:
                query, ms = max(case.timings, key=lambda timing: timing[1])
                body = {"query": query.text, "max_tokens": args.max_tokens}
                result = run_loader(env, "profile", key=key, thread_id=loaded.thread_id, body=body)
                case.profile = {"query": query.text, "http_ms": ms, **result}
                # Its requests store snapshots too.
                counts = run_loader(env, "counts", thread_id=loaded.thread_id)
            snapshots = counts["snapshots"]
            cases.append(case)
        loaded.notes.append(counts_line(counts))
        return BackendRun(cases, loaded.notes)


def counts_line(counts: dict) -> str:
    """Return the rows a context read from, as counted in the database."""
    return (
        f"rows: {counts['messages']:,} messages, {counts['observations']:,} active observations "
        f"({counts['observation_tokens']:,} tokens), entries {counts['entries']}, "
        f"{counts['chunks']:,} chunks, search items {counts['items']}, "
        f"{counts['snapshots']:,} snapshots in all"
    )


# --- Report ------------------------------------------------------------------------------------


def table(results: dict[str, BackendRun]) -> list[str]:
    """Return the latencies and tokens of every case, with the target beside them."""
    header = (
        f"{'backend':<9}{'case':<17}{'queries':<8}{'n':>5}{'first':>8}{'p50':>8}{'p95':>8}"
        f"{'p99':>8}{'tokens':>9}  target p95"
    )
    lines = [header, "-" * len(header)]
    for backend, run in results.items():
        for case in run.cases:
            for kind in ("", "rare", "common"):
                latencies = case.latencies(kind)
                p95 = percentile(latencies, 95)
                lines.append(
                    f"{backend if not kind else '':<9}{case.name if not kind else '':<17}"
                    f"{kind or 'all':<8}{len(latencies):>5}"
                    f"{f'{case.first_ms:.1f}' if not kind else '':>8}"
                    f"{percentile(latencies, 50):>8.1f}{p95:>8.1f}{percentile(latencies, 99):>8.1f}"
                    f"{f'{mean(case.tokens):,.0f}' if not kind else '':>9}"
                    f"  <= {TARGET_MS:.0f} ms {verdict(p95 <= TARGET_MS)}"
                )
    return lines


def block_lines(results: dict[str, BackendRun]) -> list[str]:
    """Return, per case, how many answers showed each block and what trimming left out."""
    lines = []
    for backend, run in results.items():
        for case in run.cases:
            answers = len(case.tokens)
            shown = ", ".join(f"{name} {case.non_empty[name]}" for name in BLOCK_NAMES)
            lines.append(f"{backend} {case.name}: non-empty in {answers} answers: {shown}")
            trims = ", ".join(
                f"{name} in {case.trimmed[name]} ({case.left_out[name] / answers:.1f} items each)"
                for name in BLOCK_NAMES
                if case.trimmed[name]
            )
            lines.append(f"    trimmed to fit: {trims or 'nothing'}")
            lines.append(
                f"    snapshots stored while measuring: {case.snapshots:,} for {case.requests:,} "
                f"requests; machine load average (1 min): {case.machine_load}"
            )
    return lines


def profile_lines(results: dict[str, BackendRun]) -> list[str]:
    """Return the in-process profiles: statements by time, plans and hotspots."""
    lines = []
    for backend, run in results.items():
        for case in run.cases:
            prof = case.profile
            if prof is None:
                continue
            statements = sorted(prof["statements"], key=lambda pair: -pair[1])
            sql_ms = sum(ms for _, ms in statements)
            lines.append(
                f"== {backend} {case.name}, query {prof['query']!r}: slowest over HTTP "
                f"{prof['http_ms']:.1f} ms; in-process {prof['total_ms']:.1f} ms, of which SQL "
                f"{sql_ms:.1f} ms in {len(statements)} statements (slowest first):"
            )
            lines += [f"   {ms:8.2f} ms  {sql}" for sql, ms in statements[:15]]
            if len(statements) > 15:
                rest = sum(ms for _, ms in statements[15:])
                lines.append(f"   {rest:8.2f} ms  ({len(statements) - 15} more statements)")
            for plan in prof["plans"]:
                lines.append(f"   plan of: {plan['sql']}")
                lines += [f"      {row}" for row in plan["plan"]]
            lines.append(
                "   app functions by cumulative time under cProfile (ncalls tottime percall "
                "cumtime percall function):"
            )
            lines += [f"   {row}" for row in prof["hotspots"]]
            lines.append("   functions by their own time under cProfile (another request):")
            lines += [f"   {row}" for row in prof["own_time"]]
    return lines


def report(results: dict[str, BackendRun], args: argparse.Namespace) -> None:
    """Print the table, the blocks, the data notes and any profiles."""
    print(
        "Context assembly through HTTP (gunicorn 2 workers x 4 threads), "
        f"POST /api/v1/threads/{{id}}/context with max_tokens {args.max_tokens:,}; one keep-alive "
        f"client, {args.queries} requests per case after {WARMUP} warm-up; latencies in ms."
    )
    print(
        "Default memory settings and no embedder (the default): entries, knowledge and recall "
        "are ranked lexical + recency; no LLM is called. 'first' = the case's first request; "
        "'tokens' = the answers' mean tokens."
    )
    print("\n".join(table(results)))
    for backend, run in results.items():
        for case in run.cases:
            p95, p50 = percentile(case.latencies(""), 95), percentile(case.latencies(""), 50)
            record_figure("context", backend, case.name, "p95", p95, "ms", ("<=", TARGET_MS))
            record_figure("context", backend, case.name, "p50", p50, "ms")
    print("\nBlocks:")
    print("\n".join(block_lines(results)))
    print("\nData:")
    for backend, run in results.items():
        print("\n".join(f"{backend}: {note}" for note in run.notes))
    profiles = profile_lines(results)
    if profiles:
        print(
            "\nProfiles (the slowest request of each case that missed the target, or of every "
            "case with --profile, sent again in-process through Django's test client after 3 "
            "warm-up runs; SQL times are per statement):"
        )
        print("\n".join(profiles))


def parse_args() -> argparse.Namespace:
    """Read the command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    parser.add_argument("--messages", type=int, default=10_000, help="messages of the thread")
    parser.add_argument("--observations", type=int, default=500, help="active observations")
    parser.add_argument("--entries", type=int, default=1_000, help="approved entries")
    parser.add_argument("--chunks", type=int, default=100_000, help="knowledge chunks")
    parser.add_argument("--queries", type=int, default=200, help="timed requests per case")
    parser.add_argument("--max-tokens", type=int, default=32_000, help="each request's budget")
    parser.add_argument("--loaders", type=int, default=2, help="chunk loaders (PostgreSQL)")
    parser.add_argument("--profile", action="store_true", help="profile every case's slowest")
    parser.add_argument("--port", type=int, default=8768, help="port for the gunicorn under test")
    parser.add_argument(
        "--keep", action="store_true", help="leave the data directory and database afterwards"
    )
    args = parser.parse_args()
    if args.messages <= UNOBSERVED + args.observations:
        parser.error(f"--messages must exceed --observations + {UNOBSERVED}")
    args.now = datetime.now(UTC).isoformat()
    return args


def main() -> None:
    """Benchmark the chosen backends and print their figures."""
    if sys.argv[1:2] == [LOADER_ARG]:
        loader_main(json.loads(sys.argv[2]))
        return
    args = parse_args()
    backends = ["sqlite", "postgres"] if args.backend == "both" else [args.backend]
    results = {backend: run_backend(backend, args) for backend in backends}
    report(results, args)


if __name__ == "__main__":
    main()
