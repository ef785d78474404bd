"""Document ingestion benchmark: a generated PDF and many Markdown files, through the HTTP API.

For each backend it builds a fresh installation: a temporary data directory (SQLite, the embedded
default) or a fresh PostgreSQL database `memory_console_bench_docs` on postgres@127.0.0.1:5432,
then `migrate`, `create_agent`, and `memory_config` to give the project the embedder
text-embedding-3-small at 256 dimensions. The embedder endpoint is a FakeOpenAIServer (a real
loopback HTTP server speaking the OpenAI embeddings API) run inside this process; the server and
the worker get OPENAI_BASE_URL and OPENAI_API_KEY for it. It starts gunicorn (2 workers x 4
threads, as `make run`) and one `manage.py run_worker --poll 0.2`, which runs every job: document
ingestion (`knowledge.ingest`; a PDF's text is read in a child process, extract_worker) and
embedding (`search.vectors`). Then it measures:

1. PDF: one generated --pages page text PDF (tests/pdfs.py), uploaded as multipart `file`. Timed
   from the start of the upload until GET /api/v1/documents/{id}, polled every 50 ms, answers
   `ready`: pages/s and chunks/s from that time (target: ready in <= 30 s). The first time each
   progress value is seen dates the stages: picked up (5), text read (50), chunked (70), ready
   (100). Then the time until every chunk has a vector: search_itemembedding rows counted in the
   database every 50 ms (the only items of the project are the PDF's chunks).
2. Markdown: --markdown generated files (300-800 words, headings, lists), uploaded by --clients
   concurrent clients while the worker already ingests them. Timed from the first upload until
   every document is `ready` (document statuses counted in the database every 50 ms; afterwards
   each document is read once through the API to check it and sum its chunk_count): docs/s and
   chunks/s; then until every search item has a vector.
3. Memory: every 50 ms the RSS (VmRSS in /proc) of the worker process and of all its descendants
   (the PDF reader); the peak of the worker alone (sampled, and its VmHWM read at the end) and of
   worker + children at one instant (target: <= 300 MB; MB here are 2**20 bytes). RSS counts a
   page shared by two processes twice, and the reader is forked from the worker (preexec_fn), so
   a sample between its fork and exec counts the worker's pages again; the PSS sum (smaps_rollup,
   shared pages split between sharers) is printed beside it as the footprint without that.
4. Where the time went, per phase: CPU seconds of the worker (utime + stime in /proc, with the
   children it waited for: the PDF reader), requests the fake embedder answered and the time it
   spent answering them, and how many `search.vectors` jobs ran. With --profile-worker FILE the
   worker runs under cProfile; FILE.<backend> is kept and a summary printed (the profiler slows
   Python-heavy code, the embedder client's response parsing most, so use it to attribute time,
   not for the figures).

The client, the fake embedder, the server, the worker and the database share the machine's CPUs,
and so does whatever else runs: the 1-minute load average before and after is printed with the
figures. Everything is removed afterwards: the processes are stopped, the temporary directory
deleted and the PostgreSQL database dropped.

Run it:
    .venv/bin/python bench/ingest_documents.py [--backend sqlite|postgres|both] [--pages 200]
        [--markdown 1000] [--clients 4] [--port 8767] [--timeout 600] [--profile-worker FILE]
"""

import argparse
import os
import pstats
import random
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import psycopg
import requests

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/ is not a package
from common import (
    ROOT,
    Api,
    backend_environment,
    background,
    create_agent,
    expect_status,
    gunicorn,
    log,
    manage,
    record,
    verdict,
)

sys.path.insert(0, str(ROOT))  # run as a script: tests/ and apps/ are importable from the root

from apps.providers.fake_openai import FakeOpenAIServer
from tests.pdfs import make_pdf, page_text

PG_DATABASE = "memory_console_bench_docs"
PROJECT = "bench"
KB_SLUG = "bench-docs"
EMBEDDER = ["embedder_model=text-embedding-3-small", "embedder_dimensions=256"]
POLL_SECONDS = 0.05
TARGET_PDF_SECONDS = 30.0
TARGET_WORKER_MB = 300.0
STAGES = {5: "picked up", 50: "text read", 70: "chunked", 100: "ready"}
# gunicorn as the other benchmarks run it, but patient with a start slowed by the load of the run
# (a 5 s request timeout, any request error tried again) and SIGKILLed if it lingers on exit.
serve = partial(
    gunicorn, request_timeout=5, retry_on=(requests.RequestException,), kill_lingering=True
)


# --- A fresh installation (bench/common.py): the embedder's config and the worker --------------


def install(env: dict[str, str]) -> str:
    """Migrate, create the agent, configure the project's embedder; return the API key."""
    manage(env, "migrate", "--noinput")
    key = create_agent(env, PROJECT, "bench")
    manage(env, "memory_config", "--project", PROJECT, *[f"--set={pair}" for pair in EMBEDDER])
    return key.strip()


@contextmanager
def run_worker(env: dict[str, str], profile: str = "") -> Iterator[subprocess.Popen]:
    """Run one embedded job worker, under cProfile when profile names a file; stop it on exit."""
    command = [sys.executable, "manage.py", "run_worker", "--poll", "0.2"]
    if profile:  # run_worker leaves its loop on SIGTERM, so cProfile writes the file at exit
        command[1:1] = ["-m", "cProfile", "-o", profile]
    worker_env = {**env, "PYTHONUNBUFFERED": "1"}
    with background(command, worker_env, "worker", kill_lingering=True) as (worker, log_path):
        wait_polling(worker, log_path)
        yield worker


def wait_polling(worker: subprocess.Popen, log_path: Path) -> None:
    """Return once the worker says it polls for jobs; fail if it exits or 60 s pass."""
    deadline = time.monotonic() + 60
    while "polling for jobs" not in log_path.read_text():
        if worker.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"the worker did not start:\n{log_path.read_text()[-2000:]}")
        time.sleep(0.1)


# --- Reading the database directly (counts only) -----------------------------------------------


class Database:
    """A read-only view of the installation's database, for counting rows while it works."""

    def __init__(self, env: dict[str, str]):
        if "DATABASE_URL" in env:
            self._conn = psycopg.connect(env["DATABASE_URL"], autocommit=True)
        else:
            path = Path(env["DATA_DIR"]) / "memory_console.sqlite3"
            self._conn = sqlite3.connect(path, timeout=30, isolation_level=None)

    def scalar(self, sql: str) -> int:
        """Return the single value of a query."""
        return self._conn.execute(sql).fetchone()[0]

    def embedded(self) -> tuple[int, int]:
        """Return (search items, items with a vector) of the installation."""
        items = self.scalar("SELECT COUNT(*) FROM search_searchitem")
        return items, self.scalar("SELECT COUNT(DISTINCT item_id) FROM search_itemembedding")

    def statuses(self) -> dict[str, int]:
        """Return how many documents are in each status."""
        return self.grouped("SELECT status, COUNT(*) FROM knowledge_document GROUP BY status")

    def jobs(self) -> dict[str, int]:
        """Return how many jobs of each kind have run or wait to run."""
        return self.grouped("SELECT kind, COUNT(*) FROM jobs_job GROUP BY kind")

    def grouped(self, sql: str) -> dict[str, int]:
        """Return the (key, count) rows of a GROUP BY query as a dict."""
        return dict(self._conn.execute(sql).fetchall())

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()


def wait_until(check: Callable[[], bool], timeout: float, what: str) -> float:
    """Poll check every POLL_SECONDS until it is true; return the perf_counter time it was."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(POLL_SECONDS)
    return time.perf_counter()


def wait_embedded(database: Database, items: int, timeout: float) -> float:
    """Wait until at least items search items exist and all have a vector; return the time."""

    def done() -> bool:
        total, with_vector = database.embedded()
        return total >= items and with_vector >= total

    return wait_until(done, timeout, f"vectors of {items} items")


# --- Worker memory and CPU, embedder work ------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    """Return the CPU time of a process and of the children it has waited for, in seconds."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rpartition(")")[2].split()
    # utime, stime, cutime, cstime: fields 14-17 of proc(5), counted from the state (field 3).
    return sum(int(ticks) for ticks in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def rss_kb(pid: int, field_name: str = "VmRSS") -> int:
    """Return a memory figure of /proc/<pid>/status in kB; 0 when the process is gone."""
    return proc_field_kb(f"/proc/{pid}/status", field_name)


def pss_kb(pid: int) -> int:
    """Return the proportional set size (shared pages split among sharers) in kB, or 0."""
    return proc_field_kb(f"/proc/{pid}/smaps_rollup", "Pss")


def proc_field_kb(path: str, field_name: str) -> int:
    """Return the kB figure of a 'Name: value kB' line of a /proc file; 0 if it is gone."""
    try:
        with open(path) as lines:
            for line in lines:
                if line.startswith(field_name + ":"):
                    return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        pass
    return 0


def descendants(pid: int) -> list[int]:
    """Return the pids of every descendant of pid, from the parent pids in /proc/*/stat."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as stat:
                ppid = int(stat.read().rpartition(")")[2].split()[1])
        except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], list(children.get(pid, []))
    while todo:
        child = todo.pop()
        found.append(child)
        todo.extend(children.get(child, []))
    return found


class TimedFakeOpenAI(FakeOpenAIServer):
    """The fake OpenAI server, adding up how many requests it answered and how long that took."""

    def __init__(self):
        super().__init__()
        self.answered = 0
        self.seconds = 0.0
        self._count_lock = threading.Lock()

    def answer(self, method: str, path: str, raw: bytes) -> tuple[int, dict]:
        """Answer as the fake does, timing it."""
        start = time.perf_counter()
        try:
            return super().answer(method, path, raw)
        finally:
            with self._count_lock:
                self.answered += 1
                self.seconds += time.perf_counter() - start


@dataclass(frozen=True)
class Usage:
    """Work done during a phase besides its timings: worker CPU and answers of the embedder."""

    worker_cpu: float = 0.0  # seconds, the worker and the children it waited for (PDF reader)
    embed_requests: int = 0
    embed_seconds: float = 0.0  # time the fake server spent answering them

    @classmethod
    def now(cls, worker_pid: int, fake: TimedFakeOpenAI) -> "Usage":
        """Return the totals so far."""
        return cls(cpu_seconds(worker_pid), fake.answered, fake.seconds)

    def __sub__(self, other: "Usage") -> "Usage":
        """Return the usage between two snapshots."""
        return Usage(
            self.worker_cpu - other.worker_cpu,
            self.embed_requests - other.embed_requests,
            self.embed_seconds - other.embed_seconds,
        )


@contextmanager
def measured(worker_pid: int, fake: TimedFakeOpenAI, into: list[Usage]) -> Iterator[None]:
    """Append the usage of the block to into."""
    before = Usage.now(worker_pid, fake)
    yield
    into.append(Usage.now(worker_pid, fake) - before)


@dataclass
class MemoryPeaks:
    """Peak resident memory of the worker, in kB."""

    worker: int = 0  # sampled
    worker_hwm: int = 0  # the kernel's high-water mark, read at the end
    children: int = 0  # sampled, all descendants together
    children_pss: int = 0
    total: int = 0  # sampled, worker + descendants at the same instant
    total_pss: int = 0
    samples: int = 0


class MemorySampler:
    """Sample the RSS of a process and its descendants every POLL_SECONDS, in a thread."""

    def __init__(self, pid: int):
        self.pid = pid
        self.peaks = MemoryPeaks()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rss-sampler", daemon=True)

    def __enter__(self) -> "MemorySampler":
        """Start sampling."""
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        """Stop sampling and read the worker's high-water mark while it still runs."""
        self._stop.set()
        self._thread.join()
        self.peaks.worker_hwm = rss_kb(self.pid, "VmHWM")

    def _run(self) -> None:
        """Take samples until stopped."""
        while not self._stop.wait(POLL_SECONDS):
            self.sample()

    def sample(self) -> None:
        """Take one sample and raise the peaks it beats."""
        worker, worker_pss = rss_kb(self.pid), pss_kb(self.pid)
        children = descendants(self.pid)
        rss = sum(rss_kb(child) for child in children)
        pss = sum(pss_kb(child) for child in children)
        peaks = self.peaks
        peaks.worker = max(peaks.worker, worker)
        peaks.children = max(peaks.children, rss)
        peaks.children_pss = max(peaks.children_pss, pss)
        peaks.total = max(peaks.total, worker + rss)
        peaks.total_pss = max(peaks.total_pss, worker_pss + pss)
        peaks.samples += 1


# --- Generated documents --------------------------------------------------------------------------

TOPICS = (
    "deployment pipeline", "billing service", "incident review", "data retention",
    "access control", "search index", "mobile release", "vendor onboarding",
    "backup rotation", "capacity planning", "support escalation", "api versioning",
)  # fmt: skip
HEADINGS = (
    "Overview", "Background", "Procedure", "Checks", "Rollback", "Owners", "Open questions",
    "Timeline", "Risks", "Decisions", "Examples", "Glossary",
)  # fmt: skip
WORDS = (
    "the team reviews every change before it reaches production and records the outcome in "
    "a shared log so that anyone on call can see which service was touched when a metric moved "
    "operators rotate credentials quarterly while auditors sample tickets to confirm approvals "
    "latency budgets are tracked per region and alerts page the owner after three minutes of "
    "sustained errors customers receive a notice when maintenance windows exceed one hour "
    "invoices are generated nightly from usage records reconciled against the ledger "
    "storage snapshots expire after thirty days unless legal hold is requested by counsel"
).split()


def markdown_document(number: int) -> str:
    """Return generated Markdown of 300-800 words under headings; the same for the same number."""
    rng = random.Random(number)
    topic = rng.choice(TOPICS)
    target = rng.randint(300, 800)
    lines = [f"# {topic.title()} note {number}", ""]
    words = 0
    for section in range(1, 100):
        if words >= target:
            break
        level = "##" if section == 1 or rng.random() < 0.6 else "###"
        lines += [f"{level} {rng.choice(HEADINGS)} {section}", ""]
        for _ in range(rng.randint(1, 3)):
            size = rng.randint(30, 90)
            lines += [sentences(rng, topic, size), ""]
            words += size
        if rng.random() < 0.3:
            lines += [f"- {sentences(rng, topic, rng.randint(5, 12))}" for _ in range(3)] + [""]
    return "\n".join(lines)


def sentences(rng: random.Random, topic: str, size: int) -> str:
    """Return about size words of prose about the topic, in sentences of 8-16 words."""
    out, left = [], size
    while left > 0:
        length = min(left, rng.randint(8, 16))
        words = [rng.choice(WORDS) for _ in range(length)]
        if rng.random() < 0.3:
            words[rng.randrange(length)] = topic
        out.append(" ".join(words).capitalize() + ".")
        left -= length
    return " ".join(out)


# --- The measurements -----------------------------------------------------------------------------


@dataclass
class PdfFigures:
    """Timings of the PDF, in seconds from the start of its upload."""

    pages: int
    upload: float = 0.0
    ready: float = 0.0
    embedded: float = 0.0
    chunks: int = 0
    stages: dict[str, float] = field(default_factory=dict)


@dataclass
class MarkdownFigures:
    """Timings of the Markdown files, in seconds from the start of the first upload."""

    files: int
    uploaded: float = 0.0
    ready: float = 0.0
    embedded: float = 0.0
    chunks: int = 0
    failed: int = 0
    vector_jobs: int = 0  # search.vectors jobs, including the PDF's


@dataclass
class Figures:
    """The measured figures of one backend."""

    backend: str
    pdf: PdfFigures
    markdown: MarkdownFigures
    usage: list[Usage]  # of the PDF, then of the Markdown files, each until all embedded
    memory: MemoryPeaks
    seconds: float
    load: tuple[float, float]  # 1-minute load average before and after


def upload(session: requests.Session, api: Api, name: str, content: bytes, mime: str) -> dict:
    """Upload one file to the knowledge base and return the new document."""
    response = session.post(
        f"{api.base_url}/api/v1/knowledge-bases/{KB_SLUG}/documents",
        files={"file": (name, content, mime)},
    )
    return expect_status(response, 202).json()


def create_knowledge_base(api: Api) -> None:
    """Create the knowledge base the documents go to."""
    response = api.session().post(f"{api.base_url}/api/v1/knowledge-bases", json={"slug": KB_SLUG})
    expect_status(response, 201)


def read_document(session: requests.Session, document_id: str, *, api: Api) -> dict:
    """Return the document as GET /api/v1/documents/{id} answers it."""
    response = session.get(f"{api.base_url}/api/v1/documents/{document_id}")
    return expect_status(response, 200).json()


def time_pdf(api: Api, database: Database, pages: int, timeout: float) -> PdfFigures:
    """Upload a generated PDF; time it to ready (polling the API) and to all chunks embedded."""
    pdf = make_pdf([page_text(number) for number in range(1, pages + 1)])
    log(f"PDF: {pages} pages, {len(pdf) / 1024:.0f} KiB")
    session = api.session()
    figures = PdfFigures(pages=pages)
    start = time.perf_counter()
    document = upload(session, api, "manual.pdf", pdf, "application/pdf")
    figures.upload = time.perf_counter() - start
    deadline = time.monotonic() + timeout
    while document["status"] not in ("ready", "failed"):
        if time.monotonic() > deadline:
            raise RuntimeError(f"PDF not ready after {timeout:.0f} s: {document}")
        time.sleep(POLL_SECONDS)
        document = read_document(session, document["id"], api=api)
        stage = STAGES.get(document["progress"])
        if stage and document["status"] != "failed":
            figures.stages.setdefault(stage, time.perf_counter() - start)
    if document["status"] == "failed":
        raise RuntimeError(f"PDF ingestion failed: {document['error']}")
    figures.ready = figures.stages["ready"]
    figures.chunks = document["chunk_count"]
    log(f"PDF: ready after {figures.ready:.2f} s, {figures.chunks} chunks; waiting for vectors")
    figures.embedded = wait_embedded(database, figures.chunks, timeout) - start
    return figures


def time_markdown(
    api: Api, database: Database, files: int, clients: int, timeout: float
) -> MarkdownFigures:
    """Upload generated Markdown files concurrently; time them to ready and to all embedded."""
    contents = [markdown_document(number).encode() for number in range(files)]
    log(f"Markdown: {files} files, {sum(map(len, contents)) / 2**20:.1f} MiB, {clients} clients")
    before = sum(database.statuses().values())

    def send(session: requests.Session, number: int) -> str:
        name = f"note-{number:05}.md"
        return upload(session, api, name, contents[number], "text/markdown")["id"]

    figures = MarkdownFigures(files=files)
    start = time.perf_counter()
    ids = in_parallel(api, clients, send, range(files))
    figures.uploaded = time.perf_counter() - start
    log(f"Markdown: uploaded in {figures.uploaded:.1f} s; waiting until all are ready")

    def settled() -> bool:
        counts = database.statuses()
        return counts.get("ready", 0) + counts.get("failed", 0) >= before + files

    figures.ready = wait_until(settled, timeout, "Markdown documents") - start
    log(f"Markdown: ready after {figures.ready:.1f} s; waiting for vectors")
    items = database.embedded()[0]  # a document's search items are written as it turns ready
    figures.embedded = wait_embedded(database, items, timeout) - start
    documents = in_parallel(api, clients, partial(read_document, api=api), ids)
    figures.failed = sum(document["status"] != "ready" for document in documents)
    figures.chunks = sum(document["chunk_count"] for document in documents)
    figures.vector_jobs = database.jobs().get("search.vectors", 0)
    return figures


def in_parallel(api: Api, clients: int, function: Callable, items) -> list:
    """Return function(session, item) for each item, called from clients threads in parallel."""
    local = threading.local()

    def call(item):
        if not hasattr(local, "session"):
            local.session = api.session()
        return function(local.session, item)

    with ThreadPoolExecutor(max_workers=clients) as pool:
        return list(pool.map(call, items))


def run_backend(backend: str, args: argparse.Namespace) -> Figures:
    """Set up a fresh installation on the backend, serve it, run the worker and measure it."""
    started = time.perf_counter()
    with (
        TimedFakeOpenAI() as fake,
        backend_environment(backend, PG_DATABASE, prefix="mc-bench-docs-") as env,
    ):
        env.update(OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY="bench")
        log(f"{backend}: fresh database, migrate, create_agent, memory_config")
        key = install(env)
        worker_profile = f"{args.profile_worker}.{backend}" if args.profile_worker else ""
        with serve(env, args.port) as base_url, run_worker(env, worker_profile) as worker:
            api = Api(base_url, key)
            create_knowledge_base(api)
            database = Database(env)
            load_before = os.getloadavg()[0]
            usage: list[Usage] = []
            try:
                with MemorySampler(worker.pid) as memory:
                    with measured(worker.pid, fake, usage):
                        pdf = time_pdf(api, database, args.pages, args.timeout)
                    with measured(worker.pid, fake, usage):
                        markdown = time_markdown(
                            api, database, args.markdown, args.clients, args.timeout
                        )
            finally:
                database.close()
            if worker.poll() is not None:
                raise RuntimeError(f"the worker exited with status {worker.returncode}")
            load = (load_before, os.getloadavg()[0])
    seconds = time.perf_counter() - started
    if worker_profile:
        print_worker_profile(worker_profile)
    return Figures(backend, pdf, markdown, usage, memory.peaks, seconds, load)


# --- The report -----------------------------------------------------------------------------------


def rows(figures: Figures) -> list[tuple[str, str, str]]:
    """Return (label, target, value) rows of one backend's figures."""
    pdf, md, memory = figures.pdf, figures.markdown, figures.memory
    pdf_use, md_use = figures.usage
    stages = " / ".join(
        f"{pdf.stages[name]:.2f}" if name in pdf.stages else "-" for name in STAGES.values()
    )
    mb = 1024
    return [
        (f"PDF {pdf.pages} pages: upload request", "", f"{pdf.upload:.2f} s"),
        ("  upload -> ready", f"<= {TARGET_PDF_SECONDS:.0f} s",
         f"{pdf.ready:.2f} s [{verdict(pdf.ready <= TARGET_PDF_SECONDS)}]"),
        ("  picked up / text read / chunked / ready", "", f"{stages} s"),
        ("  pages/s (to ready)", "", f"{pdf.pages / pdf.ready:,.1f}"),
        ("  chunks, chunks/s (to ready)", "", f"{pdf.chunks}, {pdf.chunks / pdf.ready:,.1f}"),
        ("  upload -> all chunks embedded", "", f"{pdf.embedded:.2f} s"),
        ("  worker CPU until embedded (+reader)", "", f"{pdf_use.worker_cpu:.2f} s"),
        ("  embedder requests, time answering", "", embedder(pdf_use)),
        (f"Markdown {md.files} files: all uploaded", "", f"{md.uploaded:.1f} s"),
        ("  first upload -> all ready", "", f"{md.ready:.1f} s"),
        ("  docs/s (to ready)", "", f"{md.files / md.ready:,.1f}"),
        ("  chunks, chunks/s (to ready)", "", f"{md.chunks}, {md.chunks / md.ready:,.1f}"),
        ("  first upload -> all embedded", "", f"{md.embedded:.1f} s"),
        ("  worker CPU until embedded", "",
         f"{md_use.worker_cpu:.1f} s ({md_use.worker_cpu / md.embedded:.0%} of a core)"),
        ("  embedder requests, time answering", "", embedder(md_use)),
        ("  failed documents", "0", f"{md.failed} [{verdict(md.failed == 0)}]"),
        ("  search.vectors jobs run (whole run)", "", f"{md.vector_jobs}"),
        ("Worker peak RSS (sampled / VmHWM)", "",
         f"{memory.worker / mb:.0f} / {memory.worker_hwm / mb:.0f} MB"),
        ("Children peak RSS / PSS (PDF reader)", "",
         f"{memory.children / mb:.0f} / {memory.children_pss / mb:.0f} MB"),
        ("Worker + children peak RSS sum", f"<= {TARGET_WORKER_MB:.0f} MB",
         f"{memory.total / mb:.0f} MB [{verdict(memory.total / mb <= TARGET_WORKER_MB)}]"),
        ("Worker + children peak PSS sum", "", f"{memory.total_pss / mb:.0f} MB"),
        ("Memory samples, wall time of the backend", "",
         f"{memory.samples}, {figures.seconds:.0f} s"),
        (f"Load average (1 min) before / after, {os.cpu_count()} CPUs", "",
         f"{figures.load[0]:.2f} / {figures.load[1]:.2f}"),
    ]  # fmt: skip


def embedder(usage: Usage) -> str:
    """Return how many requests the fake embedder answered and how long it took."""
    return f"{usage.embed_requests}, {usage.embed_seconds:.2f} s"


def print_table(results: list[Figures], args: argparse.Namespace) -> None:
    """Print the figures of every backend side by side, with the targets beside them."""
    print(
        f"Document ingestion through HTTP (gunicorn 2x4, one run_worker --poll 0.2, fake OpenAI "
        f"embedder {EMBEDDER[0].split('=')[1]} 256 dims); {args.pages}-page PDF, "
        f"{args.markdown} Markdown files from {args.clients} clients."
    )
    table = [rows(figures) for figures in results]
    header = ["", "target", *[figures.backend for figures in results]]
    lines = [header]
    for index, (label, target, _) in enumerate(table[0]):
        lines.append([label, target, *[backend[index][2] for backend in table]])
    widths = [max(len(line[column]) for line in lines) for column in range(len(header))]
    for line in lines:
        print("  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)))


PROFILE_PARTS = [
    ("all jobs (job_execute)", "apps/jobs/services.py", "job_execute"),
    ("  knowledge.ingest jobs", "apps/knowledge/jobs.py", "run_document_ingest"),
    ("    PDF read in the child process", "apps/knowledge/extract.py", "_pdf_sections"),
    ("    chunking", "apps/knowledge/chunking.py", "chunk_sections"),
    ("    publish (chunks + search items)", "apps/knowledge/ingestion.py", "_publish"),
    ("  search.vectors jobs", "apps/search/jobs.py", "run_vectors_sync"),
    ("    embedder calls (HTTP + parsing)", "apps/providers/embeddings.py", "embed"),
    ("claiming jobs", "apps/jobs/services.py", "job_claim_next"),
    ("sleeping between polls", "~", "<built-in method time.sleep>"),
]


def print_worker_profile(path: str) -> None:
    """Print where the profiled worker spent its wall time, then its top functions, to stderr."""
    stats = pstats.Stats(path, stream=sys.stderr)
    totals: dict[tuple[str, str], float] = {}
    for (file, _, function), (_, _, _, cumulative, _) in stats.stats.items():
        for _, suffix, name in PROFILE_PARTS:
            if file.endswith(suffix) and function == name:
                totals[suffix, name] = totals.get((suffix, name), 0.0) + cumulative
    log(f"worker profile {path} (wall seconds under cProfile, which slows Python-heavy code):")
    for label, suffix, name in PROFILE_PARTS:
        log(f"  {label:<40} {totals.get((suffix, name), 0.0):8.2f} s")
    stats.sort_stats("tottime").print_stats(15)


def parse_args() -> argparse.Namespace:
    """Read the command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    parser.add_argument("--pages", type=int, default=200, help="pages of the generated PDF")
    parser.add_argument("--markdown", type=int, default=1000, help="Markdown files uploaded")
    parser.add_argument("--clients", type=int, default=4, help="concurrent Markdown uploaders")
    parser.add_argument("--port", type=int, default=8767, help="port for the gunicorn under test")
    parser.add_argument("--timeout", type=float, default=600, help="seconds allowed per wait")
    parser.add_argument(
        "--profile-worker",
        metavar="FILE",
        help="run the worker under cProfile, write FILE.<backend> and print a summary "
        "(figures then include the profiler's overhead)",
    )
    return parser.parse_args()


def main() -> None:
    """Benchmark the chosen backends and print their figures."""
    args = parse_args()
    backends = ["sqlite", "postgres"] if args.backend == "both" else [args.backend]
    results = [run_backend(backend, args) for backend in backends]
    print_table(results, args)
    for figures in results:
        name, backend, pdf, md = "ingest_documents", figures.backend, figures.pdf, figures.markdown
        pdf_case, md_case = f"PDF {pdf.pages} pages", f"Markdown {md.files} files"
        record(
            name, backend, pdf_case, "upload -> ready", pdf.ready, "s", ("<=", TARGET_PDF_SECONDS)
        )
        record(name, backend, pdf_case, "pages/s", pdf.pages / pdf.ready, "pages/s")
        record(name, backend, md_case, "first upload -> all ready", md.ready, "s")
        record(name, backend, md_case, "failed documents", md.failed, "docs", ("<=", 0))
        peak = figures.memory.total / 1024
        record(name, backend, "worker + children", "peak RSS", peak, "MB", ("<=", TARGET_WORKER_MB))


if __name__ == "__main__":
    main()
