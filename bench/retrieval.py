"""Retrieval benchmark: how well search finds the message that answers a question.

It loads a labelled set (by default bench/data/multisession_set.json, built by
bench/multisession_data.py; bench/data/retrieval_set.json, built by bench/retrieval_data.py, is
the older, shorter one; bench/data/multilingual_set.json, built by bench/multilingual_data.py,
holds German and Spanish conversations; --set takes a path or one of the names multisession,
retrieval, multilingual) into a fresh installation through the real write path: one project and
agent, one resource per user, a thread per session or per conversation (as the set says), runs
and speaker names where the set has them, each message with its stored timestamp.

1. Lexical-only search is tuned first (no embedder needed), then for each embedder the project's
   embedder is configured, the queued `search.vectors` job runs inline, and every question is
   asked with search() scoped to that user's messages (top_k=20): lexical only, vector only and
   fused, with the default fusion weights and again with recency 0 (and any --weights).
2. Every FusionWeights field that exists and has a grid is tuned by leave-one-conversation-out
   cross-validation, lexical-only and fused per embedder (bench/retrieval_tuning.py): each grid
   point is searched once, folds are computed from its per-question results; the report gives
   per question type the defaults' figures, the cross-validated ones and the in-sample best's,
   the values chosen per fold and the most-often-chosen values (the suggested defaults).
   --select-by says which metric chooses (recall@10 by default, or nDCG@10).

Embedders (EMBEDDERS; add a line to evaluate another): `fake-openai-http` (text-embedding-3-small,
256 dims, fetched over real HTTP from the fake OpenAI server on loopback; its vectors are the
built-in hashing embedder's), `local` (local:all-MiniLM-L6-v2, with PyTorch) and `local-onnx`
(local:minilm-onnx); an embedder whose model cannot be built here (its package is missing) is
skipped with the reason. --embedders picks some by name.

Metrics per question type and overall: recall@5/10/20 and MRR count the answering messages
(grade 2; a multi-hop question has two); nDCG@10 uses every graded message (gain 2^grade - 1).
The verdict compares fused recall@10 with the best single signal.

Timestamps are shifted by whole weeks so each user's newest message is at most a week old when
the run starts (dated questions name the shifted date); --no-shift keeps the stored dates. Each
question is asked as of an hour after its conversation's newest message (search's as_of), so the
recency bonus sees the same ages at any hour of a run and the figures repeat. search() adds the
recency bonus in single-signal modes too, hence singles with recency=0 rows.

Run it with:
    .venv/bin/python bench/retrieval.py [--backend sqlite|postgres|both] [--set PATH|NAME]
        [--embedders fake-openai-http,local-onnx] [--select-by R@10|nDCG@10] [--no-tune]
        [--quick] [--weights LEXICAL,VECTOR,RECENCY[,K] ...] [--json OUT] [--no-shift]
--quick keeps the first QUICK_CONVERSATIONS conversations and two values per tuned field, to
check that the chain works in a minute or so. SQLite uses a temporary data directory; PostgreSQL
a database `memory_console_retrieval` (or --pg-database) on postgres@127.0.0.1:5432, created
afresh and dropped afterwards. `both` (the default) runs each backend in its own process, since
Django binds one database per process, then repeats the verdicts of both; --json then holds
{"backends": {"sqlite": …, "postgres": …}}.
"""

import argparse
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
from multilingual_data import SET_PATH as MULTILINGUAL_SET
from multisession_data import SET_PATH
from retrieval_data import SET_PATH as RETRIEVAL_SET
from retrieval_data import load_set, summary
from retrieval_tuning import SELECT_BY, Tuner, jsonable, point_json, tuned_grid

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the project's apps, imported once Django is set up

PG_DATABASE = "memory_console_retrieval"
QUICK_CONVERSATIONS = 3
REPORTED = ("R@5", "R@10", "MRR", "nDCG@10")  # the tuning tables' columns
SETS = {"multisession": SET_PATH, "retrieval": RETRIEVAL_SET, "multilingual": MULTILINGUAL_SET}


@dataclass(frozen=True)
class Embedder:
    """An embedder to evaluate: its name in the report and its memory config."""

    name: str
    model: str
    dims: int
    note: str


EMBEDDERS = [
    Embedder(
        "fake-openai-http",
        "text-embedding-3-small",
        256,
        "text-embedding-3-small/256 over HTTP from the fake OpenAI server (hashing vectors)",
    ),
    Embedder("local", "local:all-MiniLM-L6-v2", 384, "all-MiniLM-L6-v2/384 with PyTorch"),
    Embedder("local-onnx", "local:minilm-onnx", 384, "all-MiniLM-L6-v2/384, int8 ONNX"),
]
FAKE_SERVER = "fake-openai-http"


def parse_args() -> argparse.Namespace:
    """Read the command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    parser.add_argument(
        "--set",
        type=lambda text: SETS.get(text) or Path(text),
        default=SET_PATH,
        help=f"the labelled set: a JSON file, or one of {', '.join(SETS)}",
    )
    names = [embedder.name for embedder in EMBEDDERS]
    parser.add_argument(
        "--embedders",
        default=",".join(names),
        help=f"comma-separated subset of: {','.join(names)} (default: every one available)",
    )
    parser.add_argument("--select-by", choices=SELECT_BY, default=SELECT_BY[0])
    parser.add_argument("--no-tune", action="store_true", help="skip the cross-validated tuning")
    parser.add_argument("--quick", action="store_true", help="a few conversations, small grid")
    parser.add_argument(
        "--weights",
        action="append",
        default=[],
        metavar="L,V,R[,K]",
        help="extra fusion weights lexical,vector,recency[,rrf k] to try (repeatable)",
    )
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    parser.add_argument(
        "--pg-database", default=PG_DATABASE, help="the scratch PostgreSQL database's name"
    )
    parser.add_argument("--no-shift", action="store_true", help="keep the stored timestamps")
    args = parser.parse_args()
    chosen = [name.strip() for name in args.embedders.split(",") if name.strip()]
    unknown = sorted(set(chosen) - set(names))
    if unknown:
        parser.error(f"--embedders: unknown {', '.join(unknown)}; choose from {names}")
    args.embedder_list = [embedder for embedder in EMBEDDERS if embedder.name in chosen]
    return args


def quiet_http_logs() -> None:
    """Keep the per-request logs of the HTTP client and the fake server off the console."""
    for name in ("httpx", "httpx2", "openai", "apps.providers.fake_openai"):
        logging.getLogger(name).setLevel(logging.WARNING)


def log(text: str) -> None:
    """Print a progress line to stderr, keeping stdout for the figures."""
    print(f"[retrieval] {text}", file=sys.stderr, flush=True)


def quick_subset(data: dict) -> dict:
    """Return the set cut to its first conversations and their questions."""
    conversations = data["conversations"][:QUICK_CONVERSATIONS]
    kept = {conversation["id"] for conversation in conversations}
    questions = [q for q in data["questions"] if q["conversation"] in kept]
    return {**data, "conversations": conversations, "questions": questions}


def set_for_run(path: Path, quick: bool) -> tuple[dict, dict]:
    """Load the labelled set (its quick subset with --quick), print and return it with its facts."""
    data = load_set(path)
    if quick:
        data = quick_subset(data)
    facts = summary(data)
    print(f"set {path}{' (quick subset)' if quick else ''}: {json.dumps(facts)}")
    return data, facts


def run_per_backend(script: str, options: list[str], prefix: str) -> dict:
    """Run script on SQLite, then PostgreSQL, each in a child process (Django binds one database
    per process) with options, --backend and --json; return each backend's JSON."""
    results = {}
    with tempfile.TemporaryDirectory(prefix=prefix) as scratch:
        for backend in ("sqlite", "postgres"):
            out = Path(scratch) / f"{backend}.json"
            command = [sys.executable, script, "--backend", backend, *options]
            command += ["--json", str(out)]
            log(f"{backend}: {' '.join(command[1:])}")
            subprocess.run(command, check=True)
            results[backend] = json.loads(out.read_text())
            print(flush=True)
    return results


# --- A fresh installation -------------------------------------------------------------------


@contextmanager
def installation(backend: str, database: str = PG_DATABASE) -> Iterator[None]:
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
        with postgres_database(database):
            os.environ["DATABASE_URL"] = f"{PG_SERVER}/{database}"
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


# --- Embedders ------------------------------------------------------------------------------


def available(wanted: list[Embedder]) -> list[Embedder]:
    """Return the embedders whose model can be built here; say why each other one is skipped."""
    from apps.providers.embeddings import embedder_for
    from apps.providers.errors import EmbeddingError

    found = []
    for embedder in wanted:
        if embedder.name == FAKE_SERVER:
            found.append(embedder)
            continue
        try:
            embedder_for(embedder.model, embedder.dims)
        except EmbeddingError as error:
            print(f"note: embedder `{embedder.name}` skipped: {error}\n")
            continue
        found.append(embedder)
    return found


@contextmanager
def embedder_endpoint(embedder: Embedder) -> Iterator[None]:
    """Point the OpenAI settings at a fake server on loopback for the fake embedder."""
    if embedder.name != FAKE_SERVER:
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


def tune(loaded, questions: list, signals: tuple, vectors: dict, args) -> dict:
    """Cross-validate the FusionWeights fields for one way of searching; print and return it."""
    from apps.evaluation.retrieval import Mode, evaluate
    from apps.search.selectors import default_weights

    default = default_weights()
    grid = tuned_grid(default, signals, quick=args.quick)
    label = "+".join(signals)

    def evaluate_point(values: dict) -> dict:
        mode = Mode(label, signals, replace(default, **values), "tuning")
        rows = evaluate(loaded, questions, [mode], vectors=vectors)
        return {row["id"]: row["modes"][label] for row in rows}

    started = time.monotonic()
    conversations = {q["id"]: q["conversation"] for q in questions}
    tuner = Tuner(evaluate_point, grid, conversations, args.select_by)
    found = tuner.cross_validate()
    kinds = {q["id"]: q["type"] for q in questions}
    tables = {
        "default": type_table(tuner.results(tuner.default), kinds),
        "cross-validated": type_table(found["held_out_rows"], kinds),
        "in-sample best": type_table(tuner.results(found["in_sample"]), kinds),
    }
    elapsed = time.monotonic() - started
    log(f"tuned {label}: {found['points_searched']} grid points in {elapsed:.1f} s")
    for fold in found["folds"]:
        del fold["point"]
    result = {
        "signals": list(signals),
        "select_by": found["select_by"],
        "grid": found["grid"],
        "tables": tables,
        "in_sample_values": point_json(found["in_sample"]),
        "folds": found["folds"],
        "most_chosen": {name: jsonable(value) for name, value in found["most_chosen"].items()},
        "points_searched": found["points_searched"],
        "seconds": round(elapsed, 1),
    }
    print_tuning(label, result)
    return result


def type_table(rows: dict, kinds: dict) -> dict:
    """Return {type: {"n", metric: mean}} over per-question metrics, "all" last."""
    from apps.evaluation.retrieval import METRICS, TYPES_ORDER

    table = {}
    for kind in TYPES_ORDER:
        chosen = [metrics for q, metrics in rows.items() if kind in ("all", kinds[q])]
        if chosen:
            table[kind] = {"n": len(chosen)} | {
                metric: round(sum(m[metric] for m in chosen) / len(chosen), 4) for metric in METRICS
            }
    return table


# --- Reporting ------------------------------------------------------------------------------


def print_table(embedder: Embedder, table: dict, all_modes: list) -> None:
    """Print one embedder's metrics, a block per question type."""
    from apps.evaluation.retrieval import METRICS

    print(f"== embedder {embedder.name}: {embedder.note}")
    header = f"{'type':<11}{'n':>4}  {'mode':<28}" + "".join(f"{m:>9}" for m in METRICS)
    print(header)
    print("-" * len(header))
    for kind, block in table.items():
        for number, mode in enumerate(all_modes):
            lead = f"{kind:<11}{block['n']:>4}" if number == 0 else " " * 15
            figures = block[mode.label]
            print(f"{lead}  {mode.label:<28}" + "".join(f"{figures[m]:>9.3f}" for m in METRICS))
        print()


def print_tuning(label: str, result: dict) -> None:
    """Print a tuning's tables per question type, its folds and the most-chosen values."""
    print(f"== tuned {label}, chosen by {result['select_by']} (leave one conversation out)")
    print("grid: " + "; ".join(f"{k}={v}" for k, v in result["grid"].items()))
    header = f"{'type':<11}{'n':>4}  {'figures':<16}" + "".join(f"{m:>9}" for m in REPORTED)
    print(header)
    print("-" * len(header))
    tables = result["tables"]
    for kind, block in tables["default"].items():
        for number, (name, table) in enumerate(tables.items()):
            lead = f"{kind:<11}{block['n']:>4}" if number == 0 else " " * 15
            figures = table[kind]
            print(f"{lead}  {name:<16}" + "".join(f"{figures[m]:>9.3f}" for m in REPORTED))
    print("\nper fold:")
    for fold in result["folds"]:
        scores = f"train {fold['train']:.3f}, held out {fold['test']:.3f}"
        print(f"  {fold['held_out']:<20} {scores}  {fold['values']}")
    print(f"in-sample best: {result['in_sample_values']}")
    print(f"most often chosen (suggested defaults): {result['most_chosen']}")
    print(f"grid points searched: {result['points_searched']} in {result['seconds']} s\n")


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


def tuning_line(name: str, result: dict, backend: str) -> str:
    """Return (and record) the cross-validated recall@10 against the defaults'."""
    tables = result["tables"]
    default, crossed = tables["default"]["all"]["R@10"], tables["cross-validated"]["all"]["R@10"]
    record("retrieval", backend, f"{name}, cross-validated", "recall@10", crossed, "")
    return (
        f"[{name}] recall@10 cross-validated {crossed:.3f} (defaults {default:.3f}, in-sample "
        f"best {tables['in-sample best']['all']['R@10']:.3f}); suggested {result['most_chosen']}"
    )


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
    for group, weights in seen.items():
        values = ", ".join(f"{k}={jsonable(v)}" for k, v in asdict(weights).items())
        print(f"weights {group}: {values}")
    print()


def main() -> None:
    """Load the set into a fresh installation, search it with each embedder, print the tables."""
    args = parse_args()
    if args.backend == "both":
        run_both(args)
        return
    started = time.monotonic()
    data, facts = set_for_run(args.set, args.quick)
    print(f"backend {args.backend}\n")
    results = {"backend": args.backend, "set": str(args.set), "summary": facts, "embedders": {}}
    with installation(args.backend, args.pg_database):
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
        if not args.no_tune:
            vectors = {q["id"]: None for q in data["questions"]}
            results["lexical_tuning"] = tune(loaded, data["questions"], ("lexical",), vectors, args)
            lines.append(tuning_line("lexical", results["lexical_tuning"], args.backend))
        for embedder in available(args.embedder_list):
            results["embedders"][embedder.name] = run_embedder(
                embedder, loaded, data["questions"], all_modes, args
            )
            lines += results["embedders"][embedder.name]["verdicts"]
    print("\n".join(lines))
    results["verdicts"] = lines
    elapsed = time.monotonic() - started
    print(f"\nrun time {elapsed:.1f} s")
    results["run_seconds"] = round(elapsed, 1)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")
        log(f"wrote {args.json}")


def run_embedder(embedder: Embedder, loaded, questions: list, all_modes: list, args) -> dict:
    """Embed the set with one embedder, ask every question in every mode, tune fused search."""
    from apps.evaluation.retrieval import aggregate, evaluate, question_vectors

    with embedder_endpoint(embedder):
        started = time.monotonic()
        embed_everything(loaded.project, embedder)
        log(f"{embedder.name}: embedded in {time.monotonic() - started:.1f} s")
        started = time.monotonic()
        vectors = question_vectors(loaded, questions)
        rows = evaluate(loaded, questions, all_modes, vectors=vectors)
        searches = len(rows) * len(all_modes)
        log(f"{embedder.name}: {searches} searches in {time.monotonic() - started:.1f} s")
        table = aggregate(rows, all_modes)
        print_table(embedder, table, all_modes)
        lines = verdicts(embedder, table, all_modes, args.backend) + [overlap_line(embedder, rows)]
        tuning = None
        if not args.no_tune:
            tuning = tune(loaded, questions, ("lexical", "vector"), vectors, args)
            lines.append(tuning_line(f"{embedder.name}, fused", tuning, args.backend))
    return {
        "embedder": asdict(embedder),
        "weights": {
            mode.label: {k: jsonable(v) for k, v in asdict(mode.weights).items()}
            for mode in all_modes
        },
        "table": table,
        "tuning": tuning,
        "verdicts": lines,
        "questions": rows,
    }


def run_both(args: argparse.Namespace) -> None:
    """Run the benchmark on SQLite, then PostgreSQL, each in a child process; merge the JSON."""
    options = ["--set", str(args.set), *[f"--weights={weights}" for weights in args.weights]]
    options += ["--embedders", ",".join(e.name for e in args.embedder_list)]
    options += ["--select-by", args.select_by, "--pg-database", args.pg_database]
    flags = {"--no-shift": args.no_shift, "--no-tune": args.no_tune, "--quick": args.quick}
    options += [flag for flag, on in flags.items() if on]
    results = run_per_backend(__file__, options, "mc-retrieval-both-")
    print("== verdicts of both backends")
    for backend, result in results.items():
        print("\n".join(f"[{backend}] {line}" for line in result["verdicts"]))
    if args.json:
        args.json.write_text(json.dumps({"backends": results}, indent=1) + "\n")
        log(f"wrote {args.json}")


if __name__ == "__main__":
    main()
