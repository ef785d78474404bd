"""Search benchmark: how fast Memory Console answers POST /api/v1/search, measured through HTTP.

For each backend it builds a fresh installation: a temporary data directory (SQLite, the embedded
default) or a fresh PostgreSQL database `memory_console_bench_search` on postgres@127.0.0.1:5432,
then `migrate`, two projects with `create_agent`, the data below, and gunicorn with 2 workers x 4
threads (as `make run`). One keep-alive client sends --queries searches per case one after
another, after a warm-up; half use only rare terms (generated names and order numbers, a handful
of matches), half two or three frequent topic words (thousands to hundreds of thousands of
matches). Each case reports the two kinds apart and together, and its first query separately
(a cold worker: on SQLite it loads the scope's vectors into the process, see nearest.py).

1. thread: a thread of --turns turns (a user message and an assistant reply each, sent through
   the API) in project `hybrid`, which has the builtin-hash embedder (256 dims), so search is
   lexical + vector + recency; queries scoped by thread_id. Target p95 <= 20 ms.
2. project: --messages messages (default 1,000,000 on PostgreSQL, 200,000 on SQLite) of one
   agent of project `large`, in threads of 1000; scope messages without a thread. Whether they
   have vectors is measured (--project-vectors auto): the first --probe messages are embedded by
   the real `search.vectors` job; if that time scaled to all messages exceeds --vector-budget
   seconds, the embedder is switched off again (the job retires and deletes the vectors) and the
   project is searched lexical + recency; the output says which. Target p95 <= 100 ms on PostgreSQL.
3. knowledge: --chunks chunks (default 100,000) of 20-chunk documents in one knowledge base of
   `hybrid`, all embedded by `search.vectors`; scope knowledge. Targets p95 <= 50 ms on
   PostgreSQL, <= 150 ms on SQLite.

Loading: the thread goes through the API. The project's messages go through the service layer in
subprocesses (`thread_append_messages`, one batch of 1000 per thread: the API's write path,
indexing included, minus HTTP); the chunks as Document and Chunk rows plus `index_chunks`, as
document ingestion writes them. Vectors come from `job_run_pending()` in a subprocess, as the
worker would run it. On PostgreSQL the database is VACUUM ANALYZEd after loading, as autovacuum
would in time. Text comes from a seeded generator (templates, Zipf-like topic words, generated
names), so every run loads the same data. MEMORY_* and SEARCH_* variables are not passed on: the
server runs with the default settings. With --profile, one rare and one common query of each case
are run again in-process with each SQL statement timed (and EXPLAIN ANALYZEd on PostgreSQL).

Everything is removed afterwards: the server is stopped, the temporary directory deleted and the
PostgreSQL database dropped (--keep leaves both, to study the data and its query plans). The
client, the server and the database share the machine's CPUs.

Run it:
    .venv/bin/python bench/search.py [--backend sqlite|postgres|both] [--messages N]
        [--chunks 100000] [--turns 600] [--queries 200] [--skip-large] [--profile]
        [--keep]
    .venv/bin/python bench/search.py --skip-large        # only the thread case, quickly
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
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from statistics import median

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/ is not a package
from common import (
    LOADER_ARG,
    ROOT,
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
    record,
    task_vacuum,
    verdict,
)

PG_DATABASE = "memory_console_bench_search"
HYBRID, LARGE, AGENT, KB_SLUG = "hybrid", "large", "bench", "docs"
EMBED_MODEL, EMBED_DIMS = "builtin-hash", 256
THREAD_MESSAGES = 1000  # per thread of the large project; one append batch each
CHUNKS_PER_DOCUMENT = 20
RESOURCES = 200  # end users the large project's threads belong to
API_BATCH = 100  # messages per POST when the thread is sent through the API
WARMUP = 20  # queries per case before timing
DEFAULT_MESSAGES = {"postgres": 1_000_000, "sqlite": 200_000}
TARGETS_MS = {
    ("thread", "postgres"): 20.0,
    ("thread", "sqlite"): 20.0,
    ("project", "postgres"): 100.0,
    ("knowledge", "postgres"): 50.0,
    ("knowledge", "sqlite"): 150.0,
}

# --- Text --------------------------------------------------------------------------------------

NOUNS = """account address agent alert analytics api approval archive attachment audit backup
balance bandwidth batch billing branch browser budget bug build bundle cache calendar campaign
card cart catalog certificate channel charge chart checkout client cluster code column comment
commit config connection console contract cookie coupon credential credit csv customer dashboard
database dataset deadline delivery dependency deployment deposit device discount disk dns document
domain download draft driver email endpoint environment error estimate event export feature feed
field file filter firewall folder form forecast gateway graph group guest hardware header history
host hotfix image import incident index instance integration inventory invoice issue job key label
latency layout ledger license limit link listing load log login machine mailbox manifest map margin
memory menu merchant message metric migration mobile model module monitor network node notification
order package page partner password patch payment payroll permission phone pipeline plan platform
plugin policy pool port portal price printer priority process product profile project prompt proxy
purchase query queue quota quote rate receipt record refund region registry release report
repository request reservation resource response review role router rule runbook sale schedule
schema screen script sdk search secret segment server service session setting shipment shipping
signature sitemap size snapshot socket software sprint spreadsheet staging status storage store
subscription supplier support survey table tag task tax team template tenant test ticket timeline
timeout token traffic transaction transfer trial upload usage user vendor version video volume
warehouse webhook website widget workflow workspace zone""".split()
VERBS = """add allocate analyze approve archive assign backup block book cancel change check clean
close compare configure confirm connect copy create debug delete deploy disable download duplicate
edit enable encrypt escalate export fix flag forward generate import install invite launch limit
load lock log merge migrate monitor move notify open optimize pause pay print publish purge rebuild
reboot refund refresh reject release reload remove rename renew repair replace reset resolve
restart restore retry revert review rollback rotate run schedule scale send ship sign split start
stop submit suspend sync test track transfer translate unlock update upgrade upload validate
verify""".split()
SYLLABLES = """ba bel bra cor da del dra fen gar hal hex iso jan kel kor lan lor mal mar mek nor
nov ol par pel qua quen ras rel rov sal sen tal tar tor ul val ven vor wen xan yar zan zel zor
brix dor fal gin kas lum mir nix oth pra ryn sil tov ux vek wyn""".split()
NAME_POOL = 50_000
USER_TEMPLATES = [
    "Hi, the {n} keeps failing when I try to {v} the {n}. {name} said it worked yesterday.",
    "Can you check order {num}? The {n} shows the wrong {n} and the {n} was never sent.",
    "We need to {v} the {n} before the {n} review on Friday; {name} owns the {n}.",
    "Why is the {n} so slow after the {n} update? It takes minutes to load the {n} page.",
    "Please remind me what we decided about the {n} for {name}.",
    "I got an error about the {n} {n} when I tried to {v} the {n} file.",
    "Is it possible to {v} the {n} without losing the {n} history?",
    "{name} from the {n} team asked for a {n} report covering order {num}.",
    "The {n} on the {n} dashboard does not match the {n} export.",
    "How do I {v} the {n} for my {n} account?",
    "Could you {v} the {n} and {v} the {n} for {name} today?",
    "Our {n} went down around noon and the {n} alerts only fired an hour later.",
]
ASSISTANT_TEMPLATES = [
    "I looked at the {n} logs: the {n} failed because the {n} was out of date. "
    "I refreshed it and the {n} works again.",
    "Order {num} is on hold because the {n} check did not pass. I asked {name} to {v} the {n}.",
    "Sure. Open the {n} settings, choose {n}, then {v} it; the {n} updates within minutes.",
    "The slowdown comes from the {n} {n}; we can {v} the {n} or reduce the {n} size.",
    "Last time we agreed that {name} would {v} the {n} and the {n} would move to next week.",
    "That error means the {n} is larger than the {n} limit. {v} the {n} first, then retry.",
    "Yes, you can {v} the {n} and keep the {n} history; only the {n} is recalculated.",
    "I drafted the {n} report for {name}; it lists the {n}, the {n} and the open items.",
    "The {n} dashboard caches {n} data for an hour, so the {n} export is more recent.",
    "Go to the {n} page, pick {n}, and follow the link in the {n} email to {v} it.",
    "Done: I will {v} the {n} tonight and {v} the {n} once {name} confirms.",
    "The {n} outage started with a full {n}; I added a {n} alert so it pages us earlier.",
]
FILLERS = ["", "", "", " Thanks!", " Let me know if that helps.", " I will check again tomorrow."]
DOC_TEMPLATES = [
    "The {n} {n} keeps every {n} for thirty days before it moves to the {n} archive.",
    "To {v} a {n}, open the {name} console, select the {n} tab and press the {v} button.",
    "Error {code} means the {n} could not reach the {n}; check the {n} and try again.",
    "{name} runs in the background and will {v} each {n} in batches of {small}.",
    "Administrators can {v} the {n} from the {n} page; other roles see it read-only.",
    "When the {n} is full, new {n} requests wait in the {n} until a slot is free.",
    "The {n} limit is {small} per {n}; ask support to raise it for large {n} teams.",
    "Every {n} has an owner, a {n} and a {n}, shown on its {name} detail page.",
    "Before you {v} the {n}, make sure no running {n} still uses the {n}.",
    "The {name} {n} replaces the older {n} and can {v} a {n} without downtime.",
]
_SLOT = re.compile(r"\{(n|v|name|num|code|small)\}")
_WORD = re.compile(r"[^\W_]+")


def zipf_weights(count: int, offset: int = 8, exponent: float = 1.1) -> list[float]:
    """Return cumulative Zipf-Mandelbrot weights for ranks 1..count."""
    total, cumulative = 0.0, []
    for rank in range(1, count + 1):
        total += 1.0 / (rank + offset) ** exponent
        cumulative.append(total)
    return cumulative


def name_pool(size: int) -> list[str]:
    """Return size distinct made-up names that are no word of the templates, in a fixed order."""
    texts = [*NOUNS, *VERBS, *USER_TEMPLATES, *ASSISTANT_TEMPLATES, *FILLERS, *DOC_TEMPLATES]
    words = {word for text in texts for word in _WORD.findall(text.lower())}
    rng, names = random.Random(11), set()
    while len(names) < size:
        name = "".join(rng.choice(SYLLABLES) for _ in range(rng.choice((2, 3))))
        if name not in words:
            names.add(name.capitalize())
    return sorted(names)


def ranked(words: list[str], seed: int) -> list[str]:
    """Return the distinct words in a fixed shuffled order: their frequency ranks."""
    words = sorted(set(words))
    random.Random(seed).shuffle(words)
    return words


class Vocabulary:
    """Words and names the generator draws from, ranked by frequency."""

    def __init__(self):
        self.nouns, self.verbs = ranked(NOUNS, 1), ranked(VERBS, 2)
        self.noun_weights = zipf_weights(len(self.nouns))
        self.verb_weights = zipf_weights(len(self.verbs))
        self.names = name_pool(NAME_POOL)

    def noun(self, rng: random.Random, top: int | None = None) -> str:
        """Draw a noun by frequency, from the top ranks only if top is given."""
        weights = self.noun_weights[:top] if top else self.noun_weights
        return rng.choices(self.nouns[: len(weights)], cum_weights=weights)[0]

    def verb(self, rng: random.Random, top: int | None = None) -> str:
        """Draw a verb by frequency, from the top ranks only if top is given."""
        weights = self.verb_weights[:top] if top else self.verb_weights
        return rng.choices(self.verbs[: len(weights)], cum_weights=weights)[0]

    def fill(self, rng: random.Random, template: str) -> str:
        """Return the template with every slot drawn."""
        draw = {
            "n": lambda: self.noun(rng),
            "v": lambda: self.verb(rng),
            "name": lambda: rng.choice(self.names),
            "num": lambda: str(rng.randrange(10_000_000, 100_000_000)),
            "code": lambda: f"E{rng.randrange(10_000, 100_000)}",
            "small": lambda: str(rng.randrange(2, 500)),
        }
        text = _SLOT.sub(lambda match: draw[match.group(1)](), template)
        return text[0].upper() + text[1:]

    def message(self, rng: random.Random, seq: int) -> tuple[str, str]:
        """Return (role, content) of a chat message; even seqs are the user's."""
        templates = USER_TEMPLATES if seq % 2 == 0 else ASSISTANT_TEMPLATES
        role = "user" if seq % 2 == 0 else "assistant"
        return role, self.fill(rng, rng.choice(templates)) + rng.choice(FILLERS)

    def chunk(self, rng: random.Random) -> str:
        """Return a knowledge chunk: a heading and 7-10 sentences (about 150 words)."""
        heading = self.fill(rng, "## {name} {n}")
        sentences = [self.fill(rng, rng.choice(DOC_TEMPLATES)) for _ in range(rng.randint(7, 10))]
        return heading + "\n\n" + " ".join(sentences)


class Terms:
    """How many texts contain each word, and a sample of rare terms, for picking queries."""

    def __init__(self, counts: Counter | None = None, numbers: list[str] | None = None):
        self.counts = counts or Counter()
        self.numbers = numbers or []

    def add(self, text: str, keep_number: bool) -> None:
        """Count the words of one text; keep its first long number when asked."""
        words = set(_WORD.findall(text.lower()))
        self.counts.update(word for word in words if not word.isdigit())
        if keep_number:
            self.numbers += [word for word in words if word.isdigit() and len(word) >= 5][:1]

    def merge(self, other: "Terms") -> None:
        """Add another text set's counts and samples to these."""
        self.counts.update(other.counts)
        self.numbers += other.numbers

    def to_json(self) -> dict:
        """Return the counts and samples as JSON-ready data."""
        return {"counts": dict(self.counts), "numbers": self.numbers}

    @classmethod
    def from_json(cls, data: dict) -> "Terms":
        """Rebuild terms from to_json() data."""
        return cls(Counter(data["counts"]), list(data["numbers"]))


# --- Queries -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Query:
    """One search: its text, its kind (rare or common) and about how many texts match a term."""

    text: str
    kind: str
    matches: int


def rare_query(rng: random.Random, names: list[str], numbers: list[str]) -> str:
    """Return a query of rare terms only: names and numbers that occur in the data."""
    first, second = rng.sample(names, 2)
    number = rng.choice(numbers) if numbers else first
    return rng.choice([first, f"what about {first}?", f"{first} and {second}", number])


def common_query(rng: random.Random, vocab: Vocabulary) -> str:
    """Return a query of two or three frequent topic words."""
    noun, other, verb = vocab.noun(rng, 40), vocab.noun(rng, 40), vocab.verb(rng, 20)
    forms = [f"how do I {verb} the {noun}?", f"{noun} {other}", f"{verb} {noun} {other}"]
    return rng.choice(forms)


def matches(text: str, terms: Terms) -> int:
    """Return the summed text counts of the words the search looks for (stop words dropped)."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from apps.search.query import query_terms  # plain Python; needs no Django set-up

    return sum(terms.counts.get(word, 0) for word in query_terms(text))


def make_queries(count: int, vocab: Vocabulary, terms: Terms, seed: int) -> list[Query]:
    """Return count queries alternating rare and common, with their match estimates."""
    rng, queries = random.Random(seed), []
    names = [name for name in vocab.names if terms.counts.get(name.lower())]
    for index in range(count):
        kind = "rare" if index % 2 == 0 else "common"
        rare = kind == "rare"
        text = rare_query(rng, names, terms.numbers) if rare else common_query(rng, vocab)
        queries.append(Query(text, kind, matches(text, terms)))
    return queries


# --- Loading tasks (run inside Django, in a subprocess) --------------------------------------


def loader_main(spec: dict) -> None:
    """Set up Django, run one loading task and print its result as JSON on the last line."""
    django_setup()
    tasks = {
        "configure": task_configure,
        "messages": task_messages,
        "knowledge_base": task_knowledge_base,
        "chunks": task_chunks,
        "vectors": task_vectors,
        "vacuum": task_vacuum,
        "counts": task_counts,
        "profile": task_profile,
    }
    print(json.dumps(tasks[spec.pop("task")](**spec)))


def task_configure(project: str, model: str) -> dict:
    """Set the project's embedder (empty: none) as an operator would."""
    from apps.memconfig.services import config_update
    from apps.tenancy.models import Project

    changes = {"embedder_model": model, "embedder_dimensions": EMBED_DIMS}
    config_update(project=Project.objects.get(slug=project), changes=changes, changed_by="bench")
    return {}


def task_messages(
    project: str, first: int, last: int, total: int, seed: int, now: str, days: float
) -> dict:
    """Append messages first..last-1 of total, one batch per thread, through the service layer."""
    from apps.tenancy.models import Agent
    from apps.threads.services import thread_append_messages, thread_resolve_or_create

    agent = Agent.objects.select_related("project").get(project__slug=project, slug=AGENT)
    vocab, terms = Vocabulary(), Terms()
    times = Timeline(datetime.fromisoformat(now), days, total)
    start = time.perf_counter()
    for thread_index in range(first // THREAD_MESSAGES, -(-last // THREAD_MESSAGES)):
        thread, _ = thread_resolve_or_create(
            agent=agent, resource_id=f"user-{thread_index % RESOURCES}", title=f"#{thread_index}"
        )
        low = max(first, thread_index * THREAD_MESSAGES)
        high = min(last, (thread_index + 1) * THREAD_MESSAGES)
        items = thread_items(vocab, terms, seed + thread_index, low, high)
        thread_append_messages(agent=agent, thread_id=thread.id, items=times.stamp(items, low))
        if (thread_index + 1) % 50 == 0:
            log(f"  loader: {high - first:,} messages, {elapsed(start)}")
    return terms.to_json()


class Timeline:
    """Spreads total messages evenly over the days before now, oldest first."""

    def __init__(self, now: datetime, days: float, total: int):
        self.start, self.step = now - timedelta(days=days), timedelta(days=days) / max(1, total)

    def at(self, index: int) -> datetime:
        """Return the time of message number index."""
        return self.start + self.step * (index + 1)

    def stamp(self, items: list, offset: int) -> list:
        """Return the message inputs with created_at set from their position."""
        return [replace(item, created_at=self.at(offset + i)) for i, item in enumerate(items)]


def thread_items(vocab: Vocabulary, terms: Terms, seed: int, first: int, last: int) -> list:
    """Return the MessageInputs of one thread's messages first..last-1 (global numbers)."""
    from apps.threads.services import MessageInput

    rng, items = random.Random(seed), []
    for index in range(first, last):
        role, content = vocab.message(rng, index)
        terms.add(content, keep_number=index % 200 == 0)
        items.append(MessageInput(role=role, content=content))
    return items


def task_knowledge_base(project: str) -> dict:
    """Create the project's knowledge base and its text source (before loaders run in parallel)."""
    from apps.knowledge.models import Source
    from apps.knowledge.services import knowledge_base_get_or_create
    from apps.tenancy.models import Project

    kb = knowledge_base_get_or_create(
        project=Project.objects.get(slug=project), slug=KB_SLUG, actor="bench"
    )
    Source.objects.get_or_create(knowledge_base=kb, kind="text", label="text")
    return {}


def task_chunks(project: str, first_doc: int, last_doc: int, seed: int) -> dict:
    """Store documents first_doc..last_doc-1 of CHUNKS_PER_DOCUMENT chunks, ready and indexed."""
    from apps.knowledge.models import KnowledgeBase

    kb = KnowledgeBase.objects.get(project__slug=project, slug=KB_SLUG)
    vocab, terms, start = Vocabulary(), Terms(), time.perf_counter()
    for number in range(first_doc, last_doc):
        rng = random.Random(seed + number)
        texts = [vocab.chunk(rng) for _ in range(CHUNKS_PER_DOCUMENT)]
        for index, text in enumerate(texts):
            terms.add(text, keep_number=index == 0)
        store_document(kb, f"{vocab.fill(rng, '{name} {n}')} guide #{number}", texts)
        if (number + 1) % 500 == 0:
            log(f"  loader: {number + 1 - first_doc} documents, {elapsed(start)}")
    return terms.to_json()


def store_document(kb, title: str, texts: list[str], metadata: list[dict] | None = None) -> list:
    """Write one ready document with its chunks and index them, as ingestion does; return the
    chunks. Each chunk's metadata is metadata's item, or its heading (its first line)."""
    from django.db import transaction

    from apps.knowledge.models import Chunk, Document, DocumentStatus, Source
    from apps.knowledge.services import text_hash
    from apps.providers.tokens import count_tokens
    from apps.search.indexing import index_chunks

    body = "\n\n".join(texts)
    if metadata is None:
        metadata = [{"heading": text.splitlines()[0][3:]} for text in texts]
    with transaction.atomic():
        source, _ = Source.objects.get_or_create(knowledge_base=kb, kind="text", label="text")
        document = Document.objects.create(
            knowledge_base=kb,
            source=source,
            title=title,
            content_hash=text_hash(body),
            mime_type="text/markdown",
            size_bytes=len(body.encode()),
            text=body,
            status=DocumentStatus.READY,
            progress=100,
            chunk_count=len(texts),
            token_count=sum(count_tokens(text) for text in texts),
            uploaded_by="agent:bench",
        )
        chunks = Chunk.objects.bulk_create(
            Chunk(
                document=document,
                chunk_index=index,
                content=text,
                token_count=count_tokens(text),
                metadata=meta,
            )
            for index, (text, meta) in enumerate(zip(texts, metadata, strict=True))
        )
        index_chunks(document=document, chunks=chunks, visible=True)
    return chunks


def task_vectors() -> dict:
    """Run the pending jobs (the vector job) and time them, noting progress along the way."""
    from apps.jobs.services import job_run_pending
    from apps.search import vectors

    samples: list[tuple[float, int]] = []
    start = time.perf_counter()
    report = vectors.job_progress

    def progress(*, job, done, total, note=""):
        samples.append((time.perf_counter() - start, done))
        if len(samples) % 100 == 0:
            log(f"  vectors: {done}/{total}, {elapsed(start)}")
        report(job=job, done=done, total=total, note=note)

    vectors.job_progress = progress  # instrument the job's progress calls, nothing else
    jobs = job_run_pending()
    return {"jobs": jobs, "seconds": time.perf_counter() - start, "samples": samples}


def task_counts(project: str) -> dict:
    """Return the project's search items and vectors by kind, and its vector indexes."""
    from django.db.models import Count

    from apps.search.models import ItemEmbedding, SearchItem, VectorIndex
    from apps.tenancy.models import Project

    project_id = Project.objects.get(slug=project).id
    items = SearchItem.objects.filter(project_id=project_id)
    vectors = ItemEmbedding.objects.filter(project_id=project_id)
    return {
        "items": dict(items.values_list("kind").annotate(n=Count("id"))),
        "vectors": dict(vectors.values_list("kind").annotate(n=Count("id"))),
        "indexes": [
            f"{index.model}/{index.dims} {index.status}"
            for index in VectorIndex.objects.filter(project_id=project_id).order_by("id")
        ],
    }


# --- Profiling (inside Django) ------------------------------------------------------------------


def task_profile(key: str, body: dict) -> dict:
    """Send one search through Django in-process, timing each SQL statement and profiling it."""
    return profile_request("/api/v1/search", key, body)


# --- Driving the loaders ---------------------------------------------------------------------


SCRIPT = Path(__file__).resolve()
run_loader = partial(loader_run, SCRIPT)  # (env, task, **params): one of this script's tasks
run_loaders = partial(loaders_run, SCRIPT)  # (env, task, specs): one per spec, concurrently


@dataclass
class Load:
    """What one case's data is, and how long it took to load."""

    summary: str
    terms: Terms = field(default_factory=Terms)
    lines: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class VectorRun:
    """The timing of one run of the vector job."""

    seconds: float
    items: int
    samples: list

    def rate(self) -> float:
        """Return items embedded per second."""
        return self.items / self.seconds if self.seconds else 0.0

    def rate_change(self) -> str:
        """Return the embedding rate over the first and the last tenth of the run."""
        samples = self.samples
        if len(samples) < 20:
            return ""
        tenth = len(samples) // 10
        head = samples[tenth][1] / samples[tenth][0]
        tail = (samples[-1][1] - samples[-tenth - 1][1]) / (samples[-1][0] - samples[-tenth - 1][0])
        return f"first tenth {head:,.0f}/s, last tenth {tail:,.0f}/s"


def embed(env: dict[str, str], items: int) -> VectorRun:
    """Run the vector job and return its timing for the given number of new items."""
    result = run_loader(env, "vectors")
    run = VectorRun(result["seconds"], items, result["samples"])
    log(f"  vectors: {items:,} items in {run.seconds:.1f} s ({run.rate():,.0f}/s)")
    return run


def load_messages(
    env: dict[str, str], args: argparse.Namespace, first: int, last: int, total: int
) -> tuple[Terms, float]:
    """Load the large project's messages first..last-1 with --loaders processes."""
    low, high = first // THREAD_MESSAGES, -(-last // THREAD_MESSAGES)
    bounds = [low + (high - low) * i // args.loaders for i in range(args.loaders + 1)]
    specs = [
        {
            "project": LARGE,
            "first": max(first, lo * THREAD_MESSAGES),
            "last": min(last, hi * THREAD_MESSAGES),
            "total": total,
            "seed": 1000,
            "now": args.now,
            "days": 365.0,
        }
        for lo, hi in zip(bounds, bounds[1:], strict=False)
        if hi > lo
    ]
    start = time.perf_counter()
    terms = Terms()
    for result in run_loaders(env, "messages", specs):
        terms.merge(Terms.from_json(result))
    seconds = time.perf_counter() - start
    log(f"  {last - first:,} messages in {seconds:.0f} s ({(last - first) / seconds:,.0f}/s)")
    return terms, seconds


def load_project(env: dict[str, str], args: argparse.Namespace, backend: str) -> Load:
    """Load the large project's messages, with vectors if embedding them fits the budget."""
    total = args.messages or DEFAULT_MESSAGES[backend]
    probe = -(-args.probe // THREAD_MESSAGES) * THREAD_MESSAGES  # whole threads
    probe = min(probe, total) if args.project_vectors == "auto" else 0
    lines = []
    log(f"{backend}: project '{LARGE}': {total:,} messages (probe {probe:,})")
    terms, seconds = load_messages(env, args, 0, probe or total, total)
    load_seconds = seconds
    with_vectors = args.project_vectors == "on"
    if probe:
        with_vectors, line = probe_vectors(env, args, probe, total)
        lines.append(line)
    elif with_vectors:
        run_loader(env, "configure", project=LARGE, model=EMBED_MODEL)
    if probe and probe < total:
        more, seconds = load_messages(env, args, probe, total, total)
        terms.merge(more)
        load_seconds += seconds
    if with_vectors and (not probe or probe < total):
        run = embed(env, total - probe)
        lines.append(f"vectors of the remaining {total - probe:,}: {run.seconds:.0f} s")
    lines.insert(0, f"loaded in {load_seconds:.0f} s ({total / load_seconds:,.0f} msg/s)")
    kind = "lexical + vector + recency" if with_vectors else "lexical + recency, NO vectors"
    summary = f"{total:,} messages in {-(-total // THREAD_MESSAGES):,} threads; {kind}"
    return Load(summary, terms, lines + counts_line(env, LARGE))


def probe_vectors(
    env: dict[str, str], args: argparse.Namespace, probe: int, total: int
) -> tuple[bool, str]:
    """Embed the first probe messages; keep vectors if all would take under the budget."""
    run_loader(env, "configure", project=LARGE, model=EMBED_MODEL)
    run = embed(env, probe)
    estimate = run.seconds * total / probe
    keep = estimate <= args.vector_budget
    line = (
        f"vector probe: {probe:,} messages embedded in {run.seconds:.0f} s "
        f"({run.rate():,.0f}/s; {run.rate_change()}); {total:,} would take >= "
        f"{estimate:,.0f} s (linear; the rate falls as the table grows) -> "
        + ("kept vectors" if keep else f"over the {args.vector_budget:.0f} s budget, no vectors")
    )
    log("  " + line)
    if not keep:
        run_loader(env, "configure", project=LARGE, model="")
        retire = run_loader(env, "vectors")["seconds"]
        vacuum = run_loader(env, "vacuum", table="search_itemembedding")["seconds"]
        line += f" (embedder removed; vectors retired in {retire:.0f} s, vacuum {vacuum:.0f} s)"
    return keep, line


def load_knowledge(env: dict[str, str], args: argparse.Namespace, backend: str) -> Load:
    """Load --chunks chunks into the hybrid project's knowledge base and embed them."""
    documents = -(-args.chunks // CHUNKS_PER_DOCUMENT)
    log(f"{backend}: knowledge: {documents * CHUNKS_PER_DOCUMENT:,} chunks")
    bounds = [documents * i // args.loaders for i in range(args.loaders + 1)]
    specs = [
        {"project": HYBRID, "first_doc": low, "last_doc": high, "seed": 5000}
        for low, high in zip(bounds, bounds[1:], strict=False)
        if high > low
    ]
    run_loader(env, "knowledge_base", project=HYBRID)
    start = time.perf_counter()
    terms = Terms()
    for result in run_loaders(env, "chunks", specs):
        terms.merge(Terms.from_json(result))
    seconds = time.perf_counter() - start
    chunks = documents * CHUNKS_PER_DOCUMENT
    log(f"  {chunks:,} chunks in {seconds:.0f} s")
    run = embed(env, chunks)
    lines = [
        f"loaded in {seconds:.0f} s ({chunks / seconds:,.0f} chunks/s)",
        f"vectors: {chunks:,} embedded in {run.seconds:.0f} s "
        f"({run.rate():,.0f}/s; {run.rate_change()})",
    ]
    summary = f"{chunks:,} chunks in {documents:,} documents; lexical + vector + recency"
    return Load(summary, terms, lines + counts_line(env, HYBRID))


def counts_line(env: dict[str, str], project: str) -> list[str]:
    """Return a line of the project's index rows, read from the database."""
    counts = run_loader(env, "counts", project=project)
    return [
        f"rows: search items {counts['items']}, vectors {counts['vectors'] or 'none'}, "
        f"vector indexes {counts['indexes'] or 'none'}"
    ]


def load_thread(api: Api, env: dict[str, str], args: argparse.Namespace) -> tuple[Load, str]:
    """Send the --turns-turn thread through the API, embed it; return it and the thread id."""
    session, vocab, terms = api.session(), Vocabulary(), Terms()
    response = session.post(
        f"{api.base_url}/api/v1/threads", json={"resource_id": "u-thread", "title": "long chat"}
    )
    expect_status(response, 201)
    thread_id = response.json()["id"]
    rng, count = random.Random(77), args.turns * 2
    times = Timeline(datetime.fromisoformat(args.now), 30.0, count)
    messages = []
    for seq in range(count):
        role, content = vocab.message(rng, seq)
        terms.add(content, keep_number=True)
        messages.append({"role": role, "content": content, "created_at": times.at(seq).isoformat()})
    start = time.perf_counter()
    for first in range(0, count, API_BATCH):
        batch = {"messages": messages[first : first + API_BATCH]}
        response = session.post(f"{api.base_url}/api/v1/threads/{thread_id}/messages", json=batch)
        expect_status(response, 201)
    seconds = time.perf_counter() - start
    run = embed(env, count)
    lines = [
        f"sent through the API in {-(-count // API_BATCH)} POSTs in {seconds:.1f} s",
        f"vectors: {count:,} embedded in {run.seconds:.1f} s",
    ]
    summary = f"{count:,} messages ({args.turns} turns) in one thread; lexical + vector + recency"
    return Load(summary, terms, lines), thread_id


# --- Measuring ---------------------------------------------------------------------------------


@dataclass
class Case:
    """One measured case: what it searched and the latency of each query."""

    name: str
    load: Load
    target_ms: float | None
    first_ms: float = 0.0
    timings: list[tuple[Query, float]] = field(default_factory=list)
    empty: int = 0
    profiles: list[dict] = field(default_factory=list)
    machine_load: str = ""

    def latencies(self, kind: str = "") -> list[float]:
        """Return the latencies of the queries of a kind (all when empty)."""
        return [ms for query, ms in self.timings if not kind or query.kind == kind]

    def matches(self, kind: str = "") -> float:
        """Return the median match estimate of the queries of a kind."""
        return median(query.matches for query, _ in self.timings if not kind or query.kind == kind)


def post_search(session, api: Api, body: dict) -> tuple[float, int]:
    """POST one search; return its latency in ms and the number of results."""
    start = time.perf_counter()
    response = session.post(f"{api.base_url}/api/v1/search", json=body, timeout=120)
    ms = (time.perf_counter() - start) * 1000
    expect_status(response, 200)
    return ms, len(response.json()["results"])


def measure(api: Api, case: Case, base: dict, queries: list[Query], warmup: list[Query]) -> Case:
    """Time the first query, warm both workers up, then time the queries one after another."""
    session = api.session()
    case.first_ms, _ = post_search(session, api, {**base, "query": warmup[0].text})

    def warm(client: int) -> None:
        other = api.session()
        for query in warmup[client::4]:
            post_search(other, api, {**base, "query": query.text})

    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(warm, range(4)))
    for query in warmup[1:6]:
        post_search(session, api, {**base, "query": query.text})
    before = os.getloadavg()[0]
    for query in queries:
        ms, results = post_search(session, api, {**base, "query": query.text})
        case.timings.append((query, ms))
        case.empty += results == 0
    case.machine_load = f"{before:.2f} before, {os.getloadavg()[0]:.2f} after"
    return case


def run_case(
    api: Api, case: Case, base: dict, args: argparse.Namespace, seed: int, backend: str
) -> Case:
    """Make the case's queries from its data's terms and measure them."""
    vocab = Vocabulary()
    queries = make_queries(args.queries, vocab, case.load.terms, seed)
    warmup = make_queries(WARMUP, vocab, case.load.terms, seed + 1)
    log(f"{backend}: measuring {case.name}: {len(queries)} queries after {WARMUP} warm-up")
    return measure(api, case, base, queries, warmup)


def profile_case(env: dict[str, str], key: str, case: Case, base: dict) -> None:
    """Profile the slowest rare and the slowest common query of the case in-process."""
    for kind in ("rare", "common"):
        timed = [(ms, query) for query, ms in case.timings if query.kind == kind]
        if not timed:
            continue
        ms, query = max(timed, key=lambda pair: pair[0])
        body = {**base, "query": query.text}
        result = run_loader(env, "profile", key=key, body=body)
        case.profiles.append({"kind": kind, "query": query.text, "http_ms": ms, **result})


# --- One backend -------------------------------------------------------------------------------


@contextmanager
def search_environment(backend: str, keep: bool = False) -> Iterator[dict[str, str]]:
    """Yield a fresh installation's environment, without MEMORY_* / SEARCH_* overrides."""
    with backend_environment(backend, PG_DATABASE, keep=keep) as env:
        yield {k: v for k, v in env.items() if not k.startswith(("MEMORY_", "SEARCH_"))}


@dataclass
class Loaded:
    """A backend's loaded data: its cases (not yet measured) and notes on the loading."""

    plan: list[tuple[str, Case, dict]]
    notes: list[str]


def load_all(env: dict[str, str], args: argparse.Namespace, backend: str, api: Api) -> Loaded:
    """Load every case's data; return them as (project, case, request body) to measure."""
    with autoanalyze(env) as analyze_note:
        run_loader(env, "configure", project=HYBRID, model=EMBED_MODEL)
        large = [] if args.skip_large else [load_project(env, args, backend)]
        knowledge = [] if args.skip_large else [load_knowledge(env, args, backend)]
        thread, thread_id = load_thread(api, env, args)
    notes = [analyze_note] if analyze_note else []
    if backend == "postgres":
        # As the README tells an operator whose embedder's dimension has no index from the
        # migrations (builtin-hash: 256); SQLite has no vector index. After the loading's
        # ANALYZE rounds: CREATE INDEX CONCURRENTLY waits for every open transaction, and an
        # ANALYZE waiting for its lock deadlocks with it (autovacuum would give way; the
        # bench's stand-in does not).
        start = time.perf_counter()
        manage(env, "vector_index")
        notes.append(f"manage.py vector_index after loading: {time.perf_counter() - start:.0f} s")
    vacuum = run_loader(env, "vacuum")["seconds"]
    if backend == "postgres":
        notes.append(f"VACUUM ANALYZE after loading took {vacuum:.0f} s")

    def case(name: str, load: Load) -> Case:
        return Case(name, load, TARGETS_MS.get((name, backend)))

    plan = [(HYBRID, case("thread", thread), {"scopes": ["messages"], "thread_id": thread_id})]
    plan += [(LARGE, case("project", load), {"scopes": ["messages"]}) for load in large]
    plan += [(HYBRID, case("knowledge", load), {"scopes": ["knowledge"]}) for load in knowledge]
    return Loaded(plan, notes)


@dataclass
class BackendRun:
    """The measured cases of one backend, with notes on how it was set up."""

    cases: list[Case]
    notes: list[str]


def run_backend(backend: str, args: argparse.Namespace) -> BackendRun:
    """Set up a fresh installation on the backend, load it, serve it and measure the cases."""
    log(f"{backend}: fresh database, migrate, create_agent")
    with search_environment(backend, keep=args.keep) as env:
        manage(env, "migrate", "--noinput")
        keys = {project: create_agent(env, project, AGENT).strip() for project in (HYBRID, LARGE)}
        with gunicorn(env, args.port) as base_url:
            loaded = load_all(env, args, backend, Api(base_url, keys[HYBRID]))
            loaded.notes.append(http_floor(base_url, args.queries))
            for seed, (project, case, body) in enumerate(loaded.plan):
                run_case(Api(base_url, keys[project]), case, body, args, 100 * seed, backend)
                if args.profile:
                    profile_case(env, keys[project], case, body)
        return BackendRun([case for _, case, _ in loaded.plan], loaded.notes)


# --- Report ------------------------------------------------------------------------------------


def table(results: dict[str, BackendRun], args: argparse.Namespace) -> list[str]:
    """Return the figures of every case, with the targets beside them."""
    header = (
        f"{'backend':<9}{'case':<11}{'queries':<8}{'n':>5}{'~matches':>10}{'first':>9}"
        f"{'p50':>8}{'p95':>8}{'p99':>8}  target p95"
    )
    lines = [header, "-" * len(header)]
    for backend, run in results.items():
        for case in run.cases:
            lines += case_rows(backend, case)
    return lines


def case_rows(backend: str, case: Case) -> list[str]:
    """Return the table rows of one case: all queries, then rare and common ones apart."""
    rows = []
    for kind in ("", "rare", "common"):
        latencies = case.latencies(kind)
        if not latencies:
            continue
        p95 = percentile(latencies, 95)
        target = (
            f"<= {case.target_ms:.0f} ms {verdict(p95 <= case.target_ms)}"
            if case.target_ms
            else "(none)"
        )
        first = f"{case.first_ms:.1f}" if not kind else ""
        rows.append(
            f"{backend if not kind else '':<9}{case.name if not kind else '':<11}"
            f"{kind or 'all':<8}{len(latencies):>5}{case.matches(kind):>10,.0f}{first:>9}"
            f"{percentile(latencies, 50):>8.1f}{p95:>8.1f}{percentile(latencies, 99):>8.1f}"
            f"  {target}"
        )
    return rows


def data_lines(results: dict[str, BackendRun]) -> list[str]:
    """Return what each case searched and how its data was loaded."""
    lines = []
    for backend, run in results.items():
        lines += [f"{backend}: {note}" for note in run.notes]
        for case in run.cases:
            lines.append(f"{backend} {case.name}: {case.load.summary}")
            lines += [f"    {line}" for line in case.load.lines]
            lines.append(f"    machine load average (1 min) while timed: {case.machine_load}")
            if case.empty:
                lines.append(f"    {case.empty} queries found nothing")
    return lines


def profile_lines(results: dict[str, BackendRun]) -> list[str]:
    """Return the in-process profiles: statements, plans and hotspots of the slowest queries."""
    lines = []
    for backend, run in results.items():
        for case in run.cases:
            for prof in case.profiles:
                sql_ms = sum(ms for _, ms in prof["statements"])
                lines.append(
                    f"== {backend} {case.name} {prof['kind']} query {prof['query']!r}: slowest "
                    f"over HTTP {prof['http_ms']:.1f} ms; in-process {prof['total_ms']:.1f} ms, "
                    f"of which SQL {sql_ms:.1f} ms in {len(prof['statements'])} statements"
                )
                lines += [f"   {ms:8.2f} ms  {sql}" for sql, ms in prof["statements"]]
                for plan in prof["plans"]:
                    lines.append(f"   plan of: {plan['sql']}")
                    lines += [f"      {row}" for row in plan["plan"]]
                lines.append(
                    "   app functions by cumulative time under cProfile (ncalls tottime "
                    "percall cumtime percall function):"
                )
                lines += [f"   {row}" for row in prof["hotspots"]]
    return lines


def report(results: dict[str, BackendRun], args: argparse.Namespace) -> None:
    """Print the table, the data notes and any profiles."""
    print(
        "Search through HTTP (gunicorn 2 workers x 4 threads), POST /api/v1/search, top_k 10; "
        f"one keep-alive client, {args.queries} queries per case after {WARMUP} warm-up; "
        "latencies in ms."
    )
    print(
        "'first' = the case's first query (a cold worker); '~matches' = median over the queries "
        "of the summed counts of texts containing each query word (approximate)."
    )
    print("\n".join(table(results, args)))
    for backend, run in results.items():
        for case in run.cases:
            p95, p50 = percentile(case.latencies(""), 95), percentile(case.latencies(""), 50)
            target = ("<=", case.target_ms) if case.target_ms else None
            record("search", backend, case.name, "p95", p95, "ms", target)
            record("search", backend, case.name, "p50", p50, "ms")
    print("\nData:")
    print("\n".join(data_lines(results)))
    if args.profile:
        print(
            "\nProfiles (the slowest rare and common query of each case, sent again in-process "
            "through Django's test client after 3 warm-up runs; SQL times are per statement):"
        )
        print("\n".join(profile_lines(results)))


def parse_args() -> argparse.Namespace:
    """Read the command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    parser.add_argument(
        "--messages", type=int, default=0, help="project messages (default 1M PG, 200k SQLite)"
    )
    parser.add_argument("--chunks", type=int, default=100_000, help="knowledge chunks")
    parser.add_argument("--turns", type=int, default=600, help="turns of the thread (2 msgs each)")
    parser.add_argument("--queries", type=int, default=200, help="timed queries per case")
    parser.add_argument("--skip-large", action="store_true", help="only the thread case")
    parser.add_argument(
        "--project-vectors",
        choices=["auto", "on", "off"],
        default="auto",
        help="vectors for the project's messages: auto decides by a timed probe",
    )
    parser.add_argument("--probe", type=int, default=100_000, help="messages the probe embeds")
    parser.add_argument(
        "--vector-budget", type=float, default=900.0, help="seconds allowed to embed all (auto)"
    )
    parser.add_argument("--loaders", type=int, default=2, help="loader processes (PostgreSQL)")
    parser.add_argument("--profile", action="store_true", help="profile the slowest queries")
    parser.add_argument("--port", type=int, default=8766, help="port for the gunicorn under test")
    parser.add_argument(
        "--keep", action="store_true", help="leave the data directory and database afterwards"
    )
    args = parser.parse_args()
    args.now = datetime.now(UTC).isoformat()
    return args


def main() -> None:
    """Benchmark the chosen backends and print their figures."""
    if sys.argv[1:2] == [LOADER_ARG]:
        loader_main(json.loads(sys.argv[2]))
        return
    args = parse_args()
    backends = ["sqlite", "postgres"] if args.backend == "both" else [args.backend]
    results = {}
    for backend in backends:
        loaders = args.loaders
        args.loaders = 1 if backend == "sqlite" else loaders  # SQLite has one writer at a time
        results[backend] = run_backend(backend, args)
        args.loaders = loaders
    report(results, args)


if __name__ == "__main__":
    main()
