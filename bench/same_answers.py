"""Same answers: two checkouts of Memory Console answer the same requests alike, field by field.

A change that only moves code (a refactor) must not change any answer. This script proves it
for the search paths: it builds one fresh installation, serves it with checkout A and checkout B
side by side (gunicorn 2 workers x 4 threads each, as bench/ab.py does), sends every request to
both, the order alternating, and compares the two answers: the status code and the whole body,
field by field.

The data, loaded through the service layer by this checkout's code (normally B; the schema
must be the same in both, no migration between them), so that every scope has hits:

- project `same`, whose embedder is the built-in hashing one (deterministic and offline: the
  vector signal and the similarity floor take part), with two agents:
  - `assistant`: three conversations of bench/data/multisession_set.json (a thread each, its
    user as the end user; timestamps moved so the newest message is recent, as
    bench/retrieval.py loads them), a thread with no end user, approved memory entries for each
    end user and some for none, a few pending ones (never shown), knowledge bases `manuals` and
    `faq` (a ready document per session, a chunk per turn), personal and shared notes, and text
    artifacts (and a binary one) of a run;
  - `other`: a thread of its own for one of the same end users, its own entries and note, and
    its search_min_similarity set to 0.2 (the assistant keeps the default, 0.5);
- project `plain`, no embedder (so min_similarity is ignored, with a warning): agent
  `assistant` with one conversation, entries, notes and knowledge bases `manuals` (a slug the
  other project has too) and `plain-only`.

The requests (seeded; --searches, --contexts and --tool-calls set how many), each answered
twice:

- search: POST /api/v1/search, varying scopes, thread_id, resource_id, knowledge_base, top_k,
  message_range and min_similarity, from each agent; search, bad input: what must be 400 or 404
  (another agent's thread, an unknown thread, an end user or knowledge base of the other
  project or of none, values out of range, unknown fields);
- context: POST /api/v1/threads/{id}/context with and without a query, at several max_tokens,
  and some GETs; context, bad input: another agent's or an unknown thread, a budget out of
  range;
- context replay: GET /api/v1/contexts/{id} of each context either side stored, read from both;
  snapshot A vs B: B reads the context A stored and the one B stored, which must match;
- search_memory and get_context through POST /api/v1/tools/call and through MCP (a JSON-RPC
  tools/call POST to /mcp, its text content parsed as JSON), bad arguments too;
- memory/search: POST /api/v1/memory/search by namespace.

What may differ, and nothing else:

- IGNORED: fields that name the request itself: a context's context_id and created_at (each
  request stores a snapshot of its own);
- CLOCK_FIELDS: the recency bonus is computed from the wall clock at the request, so a score
  that holds it, and the recency signal's age and freshness, move a little between two
  requests sent moments apart: rounded as they are sent, they can tip over a rounding boundary
  (one last place). Those must agree within the tolerance named there; answers that differ
  only so are counted as "same up to the clock", apart from those identical to the byte, and
  the fields the clock moved are listed.

The table gives per kind of case the requests, how many answers were identical, the same up
to the clock, or different, and the status codes; then the first differences in detail (the
request, the field, A's and B's value), and how many hits of each type the search answers held
(so every scope is seen to answer). The exit status is 1 if any answer differs.

Run it (A is another checkout, e.g. `git worktree add ../before <commit>`; it uses its own .venv
if it has one, else this interpreter's):
    .venv/bin/python bench/same_answers.py --a ../before [--b .] [--backend sqlite|postgres|both]
        [--searches 300] [--contexts 100] [--tool-calls 40] [--show 5] [--port 8821] [--keep]
SQLite uses a temporary data directory, PostgreSQL a fresh database
`memory_console_bench_same` (or --pg-database) on postgres@127.0.0.1:5432, dropped afterwards
(--keep leaves both). It measures no time: run it beside other work.
"""

import argparse
import json
import random
import re
import sys
import uuid
from collections import Counter
from contextlib import ExitStack, suppress
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/ is not a package
from common import (
    LOADER_ARG,
    ROOT,
    Api,
    backend_environment,
    create_agent,
    django_setup,
    gunicorn,
    loader_run,
    log,
    manage,
    record,
)
from multisession_data import SET_PATH

PG_DATABASE = "memory_console_bench_same"
SCRIPT = Path(__file__).resolve()
SAME, PLAIN = "same", "plain"  # the projects: with the hashing embedder, and with none
ASSISTANT, OTHER = "assistant", "other"
KEYS = ((SAME, ASSISTANT), (SAME, OTHER), (PLAIN, ASSISTANT))
EMBEDDER = ("builtin-hash", 256)
SCOPES = ("messages", "knowledge", "episodic", "notes", "artifacts")
# Which conversations of the set go where (indexes into its conversations).
ASSISTANT_THREADS = (0, 1, 2)  # support-dana, coding-kenji, travel-sofia
NO_END_USER = 3  # its first sessions: the assistant's thread with no end user
MANUALS, FAQ = 4, 5  # the knowledge bases of project `same`
NOTES = 6
OTHER_THREAD = 7  # the other agent's thread, for the end user of ASSISTANT_THREADS[0]
PLAIN_THREAD = 8
PLAIN_KNOWLEDGE = 9
ARTIFACTS = 10
# Fields that name the request itself, by the family of cases they appear in (paths as in
# CLOCK_FIELDS, from the body's top).
IGNORED = {
    "context": ("context_id", "created_at"),
    "get_context": (
        "result.context_id",
        "result.structuredContent.context_id",
        "result.content.#.text.context_id",
    ),
}
# Fields that hold the wall clock at the request (a path's end, list indexes as #): the largest
# difference allowed between A's and B's value. Each is rounded (to 6 places, the age to 0.001
# day): between two requests moments apart the clock moves it far less than one last place
# (the recency bonus, 0.05 * 2^(-age / 30 days) / 6, by about 2e-9 a second), but it can carry
# a value across a rounding boundary, one last place.
CLOCK_FIELDS = {
    "results.#.score": 1.5e-6,  # the fused score, recency bonus included
    "blocks.#.items.#.score": 1.5e-6,  # a context item's: its hit's score
    "results.#.signals.recency.score": 1.5e-6,  # freshness
    "results.#.signals.recency.age_days": 0.0015,
    # A message's gain from its neighbour and its session: from their scores.
    "results.#.signals.context.neighbour": 1.5e-6,
    "results.#.signals.context.session": 1.5e-6,
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
EDGE_QUERIES = [
    "yesterday",
    "last week",
    "what did we decide in March?",
    "?!",
    "a",
    "the",
    "zzqxv",
    "Dana",
    "ünïcödé 漢字 données",
    "order 14 refund",
    "plan team",
]


# --- Loading (inside Django, in a subprocess: the script calls itself with LOADER_ARG) --------


def loader_main(spec: dict) -> None:
    """Set up Django, run one loading task and print its result as JSON on the last line."""
    django_setup()
    tasks = {"load": task_load}
    print(json.dumps(tasks[spec.pop("task")](**spec)))


def task_load() -> dict:
    """Load the data (see the docstring); return the ids and names the requests use."""
    from retrieval import Embedder, embed_everything

    from apps.evaluation.retrieval import Loaded, session_append, set_load, time_shifts
    from apps.jobs.models import Job, JobStatus
    from apps.jobs.services import job_run_pending
    from apps.memconfig.services import config_update
    from apps.tenancy.models import Agent
    from apps.threads.services import thread_resolve_or_create

    data = set_load(SET_PATH)
    conversations = data["conversations"]
    shifts = time_shifts(data, enabled=True)
    agents = {
        (project, slug): Agent.objects.select_related("project").get(
            project__slug=project, slug=slug
        )
        for project, slug in KEYS
    }
    assistant, other, plain = (agents[key] for key in KEYS)
    threads: dict[str, str] = {}

    def thread_of(agent, conversation: dict, sessions: list, *, resource: str | None, name: str):
        thread, _ = thread_resolve_or_create(
            agent=agent, resource_id=resource, external_id=name, title=name
        )
        loaded = Loaded(agent.project, agent, {}, {})
        for session in sessions:
            session_append(loaded, thread, session, shifts[conversation["id"]])
        threads[f"{agent.project.slug}/{agent.slug}/{name}"] = str(thread.id)
        return thread

    loaded_threads = []
    for index in ASSISTANT_THREADS:
        conversation = conversations[index]
        resource = conversation["resource"]
        loaded_threads.append(
            thread_of(
                assistant, conversation, conversation["sessions"], resource=resource, name=resource
            )
        )
    conversation = conversations[NO_END_USER]
    thread_of(assistant, conversation, conversation["sessions"][:4], resource=None, name="no-user")
    first_user = conversations[ASSISTANT_THREADS[0]]["resource"]
    conversation = conversations[OTHER_THREAD]
    thread_of(other, conversation, conversation["sessions"][:4], resource=first_user, name="own")
    conversation = conversations[PLAIN_THREAD]
    plain_user = conversation["resource"]
    thread_of(plain, conversation, conversation["sessions"], resource=plain_user, name=plain_user)

    # Entries before the embedder: its similarity dedupe would merge distinct turns.
    entries = Counter()
    for index in ASSISTANT_THREADS:
        conversation = conversations[index]
        entries["assistant"] += add_entries(
            assistant, conversation["resource"], user_turns(conversation)[::3]
        )
    entries["assistant, no end user"] = add_entries(
        assistant, None, user_turns(conversations[NO_END_USER])[40:120:8]
    )
    entries["assistant, pending"] = add_entries(
        assistant, first_user, user_turns(conversations[NO_END_USER])[120:160:8], approved=False
    )
    entries["other"] = add_entries(other, first_user, user_turns(conversations[OTHER_THREAD])[::9])
    entries["plain"] = add_entries(plain, plain_user, user_turns(conversations[PLAIN_THREAD])[::12])

    chunks = Counter()
    chunks["same/manuals"] = add_knowledge(assistant.project, "manuals", conversations[MANUALS])
    chunks["same/faq"] = add_knowledge(assistant.project, "faq", conversations[FAQ], sessions=6)
    chunks["plain/manuals"] = add_knowledge(
        plain.project, "manuals", conversations[PLAIN_KNOWLEDGE], sessions=3
    )
    chunks["plain/plain-only"] = add_knowledge(
        plain.project, "plain-only", conversations[PLAIN_KNOWLEDGE], sessions=1, first=3
    )

    sessions = conversations[NOTES]["sessions"]
    notes = Counter()
    notes["assistant, personal"] = add_notes(assistant, "personal", sessions[:6])
    notes["assistant, shared"] = add_notes(assistant, "shared", sessions[6:10])
    notes["other, personal"] = add_notes(other, "personal", sessions[10:12])
    notes["plain, personal"] = add_notes(plain, "personal", sessions[:2])
    artifacts = add_artifacts(loaded_threads[0], conversations[ARTIFACTS])

    config_update(agent=other, changes={"search_min_similarity": 0.2}, changed_by="bench")
    model, dims = EMBEDDER
    embed_everything(assistant.project, Embedder(model, model, dims, "hashing"))
    job_run_pending()
    pending = Job.objects.filter(status=JobStatus.PENDING).count()
    failed = list(Job.objects.filter(status=JobStatus.FAILED).values_list("kind", "error"))
    return {
        "threads": threads,
        "counts": {"entries": entries, "chunks": chunks, "notes": notes, "artifacts": artifacts},
        "jobs": {"pending": pending, "failed": failed},
    }


def user_turns(conversation: dict) -> list[str]:
    """The texts of the conversation's user turns, in order."""
    return [
        turn["content"]
        for session in conversation["sessions"]
        for turn in session["turns"]
        if turn["role"] == "user"
    ]


def add_entries(agent, resource_id: str | None, texts: list[str], *, approved=True) -> int:
    """Store an entry per text for the end user (or none); return how many were stored."""
    from apps.episodic.models import EntrySource
    from apps.episodic.services import entry_create
    from apps.memconfig.services import config_update
    from apps.tenancy.services import resource_get_or_create

    resource = None
    if resource_id is not None:
        resource = resource_get_or_create(project=agent.project, external_id=resource_id)
    # Approved without review while loading (as bench/fusion_by_kind.py), else the default.
    changes = {"episodic_approval_required": not approved}
    config_update(agent=agent, changes=changes, changed_by="bench")
    stored = 0
    for text in texts:
        result = entry_create(
            agent=agent, resource=resource, content=text, source=EntrySource.API, actor="bench"
        )
        stored += result.created
    config_update(agent=agent, changes={"episodic_approval_required": None}, changed_by="bench")
    return stored


def add_knowledge(project, slug: str, conversation: dict, sessions=None, first=0) -> int:
    """A knowledge base of a ready document per session, a chunk per turn; return the chunks."""
    from search import store_document

    from apps.knowledge.services import knowledge_base_get_or_create

    kb = knowledge_base_get_or_create(project=project, slug=slug, actor="bench")
    chunks = 0
    for session in conversation["sessions"][first : first + sessions if sessions else None]:
        texts = [turn["content"] for turn in session["turns"]]
        metadata = [{"session": session["id"], "turn": n} for n in range(len(texts))]
        chunks += len(
            store_document(kb, f"{conversation['user']}, {session['id']}", texts, metadata)
        )
    return chunks


def add_notes(agent, scope: str, sessions: list) -> int:
    """A note per session (its turns as lines) in the agent's personal or its project's scope."""
    from apps.notes.services import note_create

    for session in sessions:
        content = "\n".join(f"- {turn['content']}" for turn in session["turns"])
        path = f"{agent.slug}/{scope}/{session['id']}.md"
        note_create(agent=agent, scope=scope, path=path, content=content, actor="bench")
    return len(sessions)


def add_artifacts(thread, conversation: dict) -> int:
    """A run on the thread keeps a text artifact per session (and one binary file)."""
    from apps.runstate.services import artifact_create
    from apps.threads.models import RunStatus
    from apps.threads.services import run_finish, run_start

    run = run_start(thread=thread, name="artifacts")
    sessions = conversation["sessions"][:5]
    for session in sessions:
        text = "\n".join(turn["content"] for turn in session["turns"])
        artifact_create(run=run, name=f"{session['id']}.md", content=text.encode(), actor="bench")
    artifact_create(run=run, name="image.png", content=bytes(range(256)), actor="bench")
    run_finish(run=run, status=RunStatus.SUCCEEDED)
    return len(sessions) + 1


# --- The requests -----------------------------------------------------------------------------


@dataclass
class Case:
    """One request, sent alike to A and B."""

    kind: str  # the table's row
    key: tuple[str, str]  # whose API key: (project, agent)
    method: str
    path: str
    body: object = None  # JSON body (POST) or query parameters (GET)
    family: str = ""  # which IGNORED fields apply
    context: bool = False  # a context answer: its snapshot is read again afterwards


@dataclass
class Answer:
    status: int
    body: object


@dataclass
class Outcome:
    """A kind's counts, and its first differences."""

    requests: int = 0
    identical: int = 0
    clock: int = 0
    differing: int = 0
    statuses: Counter = field(default_factory=Counter)
    clock_fields: Counter = field(default_factory=Counter)  # where the clock moved a value
    shown: list = field(default_factory=list)


class Queries:
    """Query texts: the set's questions about the loaded conversations, words drawn from the
    loaded texts, and edge cases."""

    def __init__(self, rng: random.Random):
        data = json.loads(SET_PATH.read_text())
        conversations = data["conversations"]
        loaded = {conversations[i]["id"] for i in ASSISTANT_THREADS + (OTHER_THREAD, PLAIN_THREAD)}
        self.questions = [q["question"] for q in data["questions"] if q["conversation"] in loaded]
        words: set[str] = set()
        for index in (*ASSISTANT_THREADS, MANUALS, FAQ, NOTES, ARTIFACTS, PLAIN_THREAD):
            for text in user_turns(conversations[index])[::7]:
                words.update(w.strip(".,?!;:'\"()").lower() for w in text.split())
        self.words = sorted(w for w in words if len(w) > 3 and w.isalpha())
        self.resources = [conversations[i]["resource"] for i in ASSISTANT_THREADS]
        self.rng = rng

    def one(self) -> str:
        roll = self.rng.random()
        if roll < 0.4:
            return self.rng.choice(self.questions)
        if roll < 0.9:
            return " ".join(self.rng.sample(self.words, self.rng.choice((1, 2, 3))))
        return self.rng.choice(EDGE_QUERIES)


def search_cases(rng: random.Random, queries: Queries, threads: dict, count: int) -> list[Case]:
    """count searches varying every parameter, from each agent."""
    cases = []
    for _ in range(count):
        key = rng.choices(KEYS, weights=(70, 15, 15))[0]
        own = [tid for name, tid in threads.items() if name.startswith(f"{key[0]}/{key[1]}/")]
        others = [tid for name, tid in threads.items() if tid not in own]
        body: dict = {"query": queries.one()}
        if rng.random() < 0.8:
            size = rng.choice((1, 1, 1, 2, 2, 3, 5))
            body["scopes"] = rng.sample(SCOPES, size)
        roll = rng.random()
        if roll < 0.35:
            body["thread_id"] = rng.choice(own)
        elif roll < 0.4:
            body["thread_id"] = rng.choice(others)
        elif roll < 0.42:
            body["thread_id"] = str(uuid.UUID(int=rng.getrandbits(128)))
        roll = rng.random()
        if roll < 0.25:
            body["resource_id"] = rng.choice(queries.resources)
        elif roll < 0.29:
            body["resource_id"] = "marcus.hale"  # an end user of the other project
        elif roll < 0.31:
            body["resource_id"] = "nobody"
        if rng.random() < (0.3 if "knowledge" in body.get("scopes", ()) else 0.05):
            body["knowledge_base"] = rng.choice(("manuals", "manuals", "faq", "plain-only", "none"))
        if rng.random() < 0.6:
            body["top_k"] = rng.choice((1, 2, 3, 5, 10, 20, 50))
        if rng.random() < 0.25:
            body["message_range"] = {"before": rng.randint(0, 5), "after": rng.randint(0, 5)}
        if rng.random() < 0.4:
            body["min_similarity"] = rng.choice((0, 0.01, 0.05, 0.1, 0.2, 0.3, 0.5, 0.8, 1.0))
        cases.append(Case("search", key, "POST", "/api/v1/search", body))
    return cases


def bad_search_cases(threads: dict) -> list[Case]:
    """Searches that must be refused: 400 for bad values, 404 for what the agent cannot see."""
    theirs = threads[f"{SAME}/{OTHER}/own"]
    plain = next(tid for name, tid in threads.items() if name.startswith(f"{PLAIN}/"))
    bodies = [
        {},
        {"query": ""},
        {"query": "x" * 2001},
        {"query": "refund", "scopes": []},
        {"query": "refund", "scopes": ["files"]},
        {"query": "refund", "scopes": "messages"},
        {"query": "refund", "top_k": 0},
        {"query": "refund", "top_k": 51},
        {"query": "refund", "top_k": "ten"},
        {"query": "refund", "min_similarity": 1.5},
        {"query": "refund", "min_similarity": -0.1},
        {"query": "refund", "message_range": {"before": -1, "after": 0}},
        {"query": "refund", "message_range": {"before": 1, "after": 1, "around": 2}},
        {"query": "refund", "message_range": {"before": 100, "after": 0}},
        {"query": "refund", "thread_id": "not-a-uuid"},
        {"query": "refund", "colour": "blue"},
        {"query": "refund", "thread_id": theirs},
        {"query": "zzqxv", "thread_id": theirs},
        {"query": "refund", "thread_id": plain},
        {"query": "refund", "thread_id": str(uuid.UUID(int=7))},
        {"query": "refund", "resource_id": "marcus.hale"},
        {"query": "refund", "resource_id": "nobody"},
        {"query": "refund", "resource_id": ""},
        {"query": "refund", "scopes": ["knowledge"], "knowledge_base": "plain-only"},
        {"query": "refund", "scopes": ["knowledge"], "knowledge_base": "none"},
        {"query": "refund", "scopes": ["messages"], "knowledge_base": "none"},
        {"query": "refund", "knowledge_base": "Not A Slug!"},
        {"query": "refund", "resource_id": "nobody", "knowledge_base": "none"},
        {"query": "refund", "thread_id": theirs, "resource_id": "nobody"},
    ]
    cases = [
        Case("search, bad input", (SAME, ASSISTANT), "POST", "/api/v1/search", b) for b in bodies
    ]
    cases.append(Case("search, bad input", (SAME, ASSISTANT), "POST", "/api/v1/search", ["x"]))
    mine = threads[f"{SAME}/{ASSISTANT}/no-user"]
    for body in (
        {"query": "refund", "thread_id": mine},
        {"query": "refund", "knowledge_base": "faq"},
    ):
        cases.append(Case("search, bad input", (PLAIN, ASSISTANT), "POST", "/api/v1/search", body))
    return cases


def context_cases(rng: random.Random, queries: Queries, threads: dict, count: int) -> list[Case]:
    """count contexts (the assistant's threads mostly), with and without a query."""
    cases = []
    for n in range(count):
        key = rng.choices(KEYS, weights=(80, 10, 10))[0]
        own = [tid for name, tid in threads.items() if name.startswith(f"{key[0]}/{key[1]}/")]
        thread = rng.choice(own)
        body: dict = {}
        roll = rng.random()
        if roll < 0.75:
            body["query"] = queries.one()
        elif roll < 0.85:
            body["query"] = ""
        if rng.random() < 0.85:
            body["max_tokens"] = rng.choice((200, 500, 1000, 2000, 4000, 8000, 32000, 200000))
        path = f"/api/v1/threads/{thread}/context"
        method = "GET" if n % 10 == 9 else "POST"
        cases.append(Case("context", key, method, path, body, family="context", context=True))
    theirs = threads[f"{SAME}/{OTHER}/own"]
    mine = threads[f"{SAME}/{ASSISTANT}/no-user"]
    bad = [
        (theirs, {"query": "refund"}),
        (str(uuid.UUID(int=7)), {"query": "refund"}),
        (mine, {"query": "refund", "max_tokens": 100}),
        (mine, {"query": "refund", "max_tokens": "many"}),
        (mine, {"query": "x" * 2001}),
        (mine, {"query": "refund", "colour": "blue"}),
    ]
    for thread, body in bad:
        path = f"/api/v1/threads/{thread}/context"
        cases.append(Case("context, bad input", (SAME, ASSISTANT), "POST", path, body, "context"))
    return cases


def tool_arguments(rng: random.Random, queries: Queries, threads: dict, count: int):
    """(key, tool, arguments) of count search_memory calls, count // 2 get_context calls and bad
    arguments."""
    calls = []
    for _ in range(count):
        key = rng.choices(KEYS, weights=(70, 15, 15))[0]
        arguments: dict = {"query": queries.one()}
        if rng.random() < 0.8:
            arguments["scopes"] = rng.sample(SCOPES, rng.choice((1, 2, 3, 5)))
        if rng.random() < 0.6:
            arguments["top_k"] = rng.choice((1, 3, 5, 10, 20, 50))
        if rng.random() < 0.4:
            arguments["min_similarity"] = rng.choice((0, 0.05, 0.2, 0.5, 1.0))
        calls.append((key, "search_memory", arguments))
    for _ in range(count // 2):
        key = rng.choices(KEYS, weights=(80, 10, 10))[0]
        own = [tid for name, tid in threads.items() if name.startswith(f"{key[0]}/{key[1]}/")]
        arguments = {"thread_id": rng.choice(own)}
        if rng.random() < 0.8:
            arguments["query"] = queries.one()
        if rng.random() < 0.8:
            arguments["max_tokens"] = rng.choice((200, 1000, 4000, 32000))
        calls.append((key, "get_context", arguments))
    assistant = (SAME, ASSISTANT)
    for arguments in (
        {"query": "refund", "scopes": ["files"]},
        {"query": "refund", "top_k": 0},
        {"query": "refund", "min_similarity": 2},
        {"query": ""},
        {"scopes": ["messages"]},
    ):
        calls.append((assistant, "search_memory", arguments))
    calls.append((assistant, "get_context", {"thread_id": threads[f"{SAME}/{OTHER}/own"]}))
    calls.append((assistant, "get_context", {"thread_id": str(uuid.UUID(int=7))}))
    return calls


def tool_cases(calls: list) -> list[Case]:
    """Each call through POST /api/v1/tools/call and as an MCP tools/call."""
    cases = []
    for number, (key, tool, arguments) in enumerate(calls, start=1):
        family = "get_context" if tool == "get_context" else ""
        body = {"name": tool, "arguments": arguments}
        cases.append(Case(f"{tool}, tools/call", key, "POST", "/api/v1/tools/call", body, family))
        params = {"name": tool, "arguments": arguments}
        message = {"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": params}
        cases.append(Case(f"{tool}, MCP", key, "MCP", "/mcp", message, family))
    return cases


def memory_search_cases(rng: random.Random, queries: Queries, count: int) -> list[Case]:
    """POST /api/v1/memory/search by namespace (a knowledge base's slug)."""
    cases = []
    for _ in range(count):
        key = rng.choices(KEYS, weights=(70, 10, 20))[0]
        body = {"query": queries.one(), "namespace": rng.choice(("manuals", "faq", "plain-only"))}
        if rng.random() < 0.5:
            body["top_k"] = rng.choice((1, 5, 20, 50))
        if rng.random() < 0.5:
            body["min_similarity"] = rng.choice((0, 0.05, 0.2, 0.5, 1.0))
        cases.append(Case("memory/search", key, "POST", "/api/v1/memory/search", body))
    cases.append(
        Case("memory/search", (SAME, ASSISTANT), "POST", "/api/v1/memory/search", {"query": "x"})
    )
    return cases


# --- Sending and comparing --------------------------------------------------------------------


def send(session, base_url: str, case: Case) -> Answer:
    """Send the case; the answer's body as JSON (MCP: text content parsed too), else text."""
    url = base_url + case.path
    if case.method == "GET":
        response = session.get(url, params=case.body, timeout=120)
    elif case.method == "MCP":
        response = session.post(url, json=case.body, headers=MCP_HEADERS, timeout=120)
    else:
        response = session.post(url, json=case.body, timeout=120)
    try:
        body = response.json()
    except ValueError:
        body = response.text
    if case.method == "MCP" and isinstance(body, dict):
        for content in body.get("result", {}).get("content", []):
            # A plain message (an error's) stays text.
            with suppress(KeyError, TypeError, ValueError):
                content["text"] = json.loads(content["text"])
    return Answer(response.status_code, body)


MISSING = "<missing>"


def leaf_differences(a, b, path: str = "") -> list[tuple[str, object, object]]:
    """Return (path, A's value, B's value) of every leaf where a and b differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        found = []
        for key in list(a) + [key for key in b if key not in a]:
            sub = f"{path}.{key}" if path else str(key)
            if key not in a or key not in b:
                found.append((sub, a.get(key, MISSING), b.get(key, MISSING)))
            else:
                found += leaf_differences(a[key], b[key], sub)
        if list(a) != list(b) and not found:
            found.append((f"{path}.<key order>", list(a), list(b)))
        return found
    if isinstance(a, list) and isinstance(b, list):
        found = []
        if len(a) != len(b):
            found.append((f"{path}.<length>", len(a), len(b)))
        for index, (x, y) in enumerate(zip(a, b, strict=False)):
            found += leaf_differences(x, y, f"{path}.{index}")
        return found
    if type(a) is not type(b) or a != b:
        return [(path, a, b)]
    return []


def general(path: str) -> str:
    """The path with its list indexes as #: results.3.score -> results.#.score."""
    return re.sub(r"(?<=\.)\d+(?=\.|$)|^\d+(?=\.|$)", "#", path)


def within_clock(path: str, a, b) -> bool:
    """Whether the difference is the wall clock's: a CLOCK_FIELDS field, within its tolerance."""
    numbers = (int, float)
    if isinstance(a, bool) or isinstance(b, bool):
        return False
    if not (isinstance(a, numbers) and isinstance(b, numbers)):
        return False
    shape = general(path)
    for end, tolerance in CLOCK_FIELDS.items():
        if shape == end or shape.endswith("." + end):
            return abs(a - b) <= tolerance
    return False


def compare(case: Case, a: Answer, b: Answer) -> tuple[list, list]:
    """Return the differences that count, and those within the clock's tolerance."""
    if a.status != b.status:
        return [("<status>", a.status, b.status)], []
    ignored = IGNORED.get(case.family, ())
    real, clock = [], []
    for path, x, y in leaf_differences(a.body, b.body):
        if general(path) not in ignored:
            (clock if within_clock(path, x, y) else real).append((path, x, y))
    return real, clock


class Sides:
    """A's and B's servers, and a keep-alive session per side and API key."""

    def __init__(self, urls: dict[str, str], keys: dict[tuple[str, str], str]):
        self.urls = urls
        self.sessions = {
            (side, who): Api(url, key).session()
            for side, url in urls.items()
            for who, key in keys.items()
        }

    def send(self, side: str, case: Case) -> Answer:
        return send(self.sessions[(side, case.key)], self.urls[side], case)


def run_cases(
    cases: list[Case], sides: Sides, outcomes: dict[str, Outcome], show: int
) -> list[tuple[Case, Answer, Answer]]:
    """Send each case to A and B, A first for even cases, B first for odd ones; tally the
    comparison under the case's kind. Return the cases with their answers."""
    answered = []
    for number, case in enumerate(cases):
        answers = {side: sides.send(side, case) for side in ("AB" if number % 2 == 0 else "BA")}
        tally(outcomes, case, answers["A"], answers["B"], show)
        answered.append((case, answers["A"], answers["B"]))
    return answered


def tally(outcomes: dict[str, Outcome], case: Case, a: Answer, b: Answer, show: int) -> None:
    """Count the comparison of A's and B's answers under the case's kind."""
    differences, clock = compare(case, a, b)
    outcome = outcomes.setdefault(case.kind, Outcome())
    outcome.requests += 1
    outcome.statuses[b.status] += 1
    outcome.clock_fields.update(general(path) for path, _, _ in clock)
    if differences:
        outcome.differing += 1
        if len(outcome.shown) < show:
            outcome.shown.append((case, a.status, b.status, differences))
    elif clock:
        outcome.clock += 1
    else:
        outcome.identical += 1


def stored_contexts(answered: list) -> list[tuple[Case, str, str]]:
    """(case, A's context_id, B's) of each context both answered with 200."""
    return [
        (case, a.body["context_id"], b.body["context_id"])
        for case, a, b in answered
        if case.context and a.status == b.status == 200
    ]


def replay(kind: str, case: Case, context_id: str) -> Case:
    """GET /contexts/{id}: a stored context, re-rendered from the rows it named."""
    return Case(kind, case.key, "GET", f"/api/v1/contexts/{context_id}", family="context")


def compare_snapshots(sides: Sides, stored: list, outcomes: dict, show: int) -> None:
    """B reads the context A stored and the one B stored for the same request: they must match."""
    for case, stored_a, stored_b in stored:
        kind = "snapshot A vs B"
        a = sides.send("B", replay(kind, case, stored_a))
        b = sides.send("B", replay(kind, case, stored_b))
        tally(outcomes, replay(kind, case, stored_a), a, b, show)


def coverage(answered: list) -> str:
    """What the answers held: search hits by type, context blocks that were not empty."""
    hits, blocks = Counter(), Counter()
    for _, _, b in answered:
        if b.status != 200 or not isinstance(b.body, dict):
            continue
        body = b.body.get("result", b.body)
        if isinstance(body, dict) and isinstance(body.get("structuredContent"), dict):
            body = body["structuredContent"]
        for hit in body.get("results", []) if isinstance(body, dict) else []:
            hits[hit.get("type", "knowledge")] += 1
        for block in body.get("blocks", []) if isinstance(body, dict) else []:
            blocks[block["name"]] += bool(block["items"])
    warnings = Counter(
        warning["code"]
        for _, _, b in answered
        if isinstance(b.body, dict)
        for warning in b.body.get("warnings", [])
    )
    return (
        f"hits by type (B's answers): {dict(hits)}\n"
        f"contexts with the block not empty: {dict(blocks)}\n"
        f"warnings: {dict(warnings)}"
    )


# --- One backend ------------------------------------------------------------------------------


def run_backend(backend: str, args: argparse.Namespace) -> dict[str, Outcome]:
    """Load a fresh installation, serve it with A and B, compare their answers; print them."""
    with backend_environment(
        backend, args.pg_database, prefix="mc-bench-same-", keep=args.keep
    ) as env:
        log(f"{backend}: fresh database, migrate, agents, data")
        manage(env, "migrate", "--noinput")
        keys = {
            (project, agent): create_agent(env, project, agent).strip() for project, agent in KEYS
        }
        loaded = loader_run(SCRIPT, env, "load")
        if loaded["jobs"]["pending"] or loaded["jobs"]["failed"]:
            raise RuntimeError(f"jobs left after loading: {loaded['jobs']}")
        log(f"{backend}: loaded {json.dumps(loaded['counts'])}")
        rng = random.Random(args.seed)
        queries = Queries(rng)
        threads = loaded["threads"]
        cases = search_cases(rng, queries, threads, args.searches) + bad_search_cases(threads)
        cases += context_cases(rng, queries, threads, args.contexts)
        cases += tool_cases(tool_arguments(rng, queries, threads, args.tool_calls))
        cases += memory_search_cases(rng, queries, args.tool_calls // 2)
        outcomes: dict[str, Outcome] = {}
        with ExitStack() as stack:
            urls = {}
            for offset, (side, checkout) in enumerate((("A", args.a), ("B", args.b))):
                server = gunicorn(
                    env, args.port + offset, checkout=checkout.resolve(), name=f"same-{side}"
                )
                urls[side] = stack.enter_context(server)
            sides = Sides(urls, keys)
            log(f"{backend}: {len(cases)} requests to each of A and B")
            answered = run_cases(cases, sides, outcomes, args.show)
            stored = stored_contexts(answered)
            replays = [
                replay("context replay", case, context_id)
                for case, *ids in stored
                for context_id in ids
            ]
            log(f"{backend}: {len(replays)} stored contexts read again from each")
            run_cases(replays, sides, outcomes, args.show)
            compare_snapshots(sides, stored, outcomes, args.show)
        report(backend, args, outcomes, coverage(answered))
        return outcomes


def report(backend: str, args, outcomes: dict[str, Outcome], covered: str) -> None:
    name = {"sqlite": "SQLite", "postgres": "PostgreSQL"}[backend]
    print(f"\nSame answers on {name}: A {args.a} vs B {args.b}")
    header = f"{'case kind':<28}{'requests':>9}{'identical':>11}{'same up to clock':>18}"
    print(header + f"{'differing':>11}  statuses")
    total = Outcome()
    for kind, outcome in outcomes.items():
        statuses = " ".join(f"{code}:{n}" for code, n in sorted(outcome.statuses.items()))
        print(
            f"{kind:<28}{outcome.requests:>9}{outcome.identical:>11}{outcome.clock:>18}"
            f"{outcome.differing:>11}  {statuses}"
        )
        total.requests += outcome.requests
        total.identical += outcome.identical
        total.clock += outcome.clock
        total.differing += outcome.differing
        record("same_answers", backend, kind, "differing answers", outcome.differing, "", ("<=", 0))
    print(
        f"{'all':<28}{total.requests:>9}{total.identical:>11}{total.clock:>18}{total.differing:>11}"
    )
    print(covered)
    moved = Counter()
    for outcome in outcomes.values():
        moved.update(outcome.clock_fields)
    print(f"values the clock moved (within CLOCK_FIELDS' tolerance): {dict(moved)}")
    for kind, outcome in outcomes.items():
        for case, status_a, status_b, differences in outcome.shown:
            print(f"\nDIFFERS [{kind}] {case.method} {case.path} as {'/'.join(case.key)}")
            print(f"  request: {json.dumps(case.body)[:400]}")
            print(f"  status: A {status_a}, B {status_b}")
            for path, x, y in differences[:8]:
                x, y = excerpts(x, y)
                print(f"  {path}: A {x} | B {y}")
            if len(differences) > 8:
                print(f"  ... and {len(differences) - 8} more fields")


def excerpts(a, b, width: int = 160) -> tuple[str, str]:
    """Return two differing values as JSON, around where they first differ."""
    a, b = json.dumps(a, ensure_ascii=False), json.dumps(b, ensure_ascii=False)
    at = next((n for n, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), 0)
    start = max(0, at - width // 3)
    lead = "…" if start else ""
    return lead + a[start : start + width], lead + b[start : start + width]


def main() -> None:
    if sys.argv[1:2] == [LOADER_ARG]:
        loader_main(json.loads(sys.argv[2]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a", type=Path, required=True, help="checkout A (e.g. before)")
    parser.add_argument("--b", type=Path, default=ROOT, help="checkout B (default: this one)")
    parser.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    parser.add_argument("--searches", type=int, default=300, help="POST /search cases")
    parser.add_argument("--contexts", type=int, default=100, help="context cases")
    parser.add_argument(
        "--tool-calls",
        type=int,
        default=40,
        help="search_memory calls each way (get_context and memory/search: half as many)",
    )
    parser.add_argument("--show", type=int, default=5, help="differences shown per kind")
    parser.add_argument("--seed", type=int, default=20251128)
    parser.add_argument("--port", type=int, default=8821, help="A's port; B's is the next")
    parser.add_argument("--pg-database", default=PG_DATABASE)
    parser.add_argument("--keep", action="store_true", help="leave the data afterwards")
    args = parser.parse_args()
    backends = ["sqlite", "postgres"] if args.backend == "both" else [args.backend]
    differing = 0
    for backend in backends:
        outcomes = run_backend(backend, args)
        differing += sum(outcome.differing for outcome in outcomes.values())
    sys.exit(1 if differing else 0)


if __name__ == "__main__":
    main()
