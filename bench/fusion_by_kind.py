"""Fusion by kind: rank or normalised-score fusion for knowledge chunks and episodic entries?

Messages are fused by per-query normalised scores (SEARCH_NORMALIZED_KINDS=message, measured by
bench/retrieval.py); chunks and entries keep reciprocal rank fusion without a measurement. This
script measures both fusions for those two kinds on the labelled multi-session set
(bench/data/multisession_set.json, built by bench/multisession_data.py), so the benchmark
decides per kind (issue #16).

1. A fresh installation, one project and agent. The set's turns are loaded twice through the
   app's own services:
   - as knowledge: a knowledge base per conversation, a ready document per session, a chunk per
     turn (Document and Chunk rows indexed with `index_chunks`, as bench/search.py loads them);
   - as episodic entries: an approved entry per turn for the conversation's resource (its user),
     through `entry_create` with episodic_approval_required off for the agent while loading.
     entry_create dedupes by hash, so identical turns (the filler's "Thanks, that helps.") share
     one entry; no answering turn repeats another's text. The entries are stored before the
     project has an embedder, so the similarity dedupe does not merge distinct turns.
   Each turn keeps its chunk and its entry: a question's labelled turns grade the hits.
2. The project's embedder becomes local:minilm-onnx (384 dims; bench/retrieval.py's
   embed_everything) and the queued vector job runs inline.
3. Every question is asked with the search service's rank() (top 20), kind `chunk` scoped to
   its conversation's knowledge base and kind `entry` scoped to its user's entries: lexical
   only, vector only, rank fusion at each lexical:vector weight pair of RANK_GRID (the first,
   the settings' 0.5:1, is today's search of these kinds) and normalised fusion
   (apps/search/normalized.py) at each pair of WEIGHT_GRID; every other weight is the
   settings' (default_weights()).
4. Per kind and mode: recall@5/10/20 and MRR count the answering turns (grade 2; a multi-hop
   question has two), nDCG@10 every graded turn (apps.evaluation.retrieval.score); a turn is
   found when its chunk or entry is. Each fusion's weight pair is chosen by
   leave-one-conversation-out cross-validation (bench/retrieval_tuning.py's Tuner: by recall@10,
   nDCG@10 breaking ties, the settings' pair winning a tie); the pooled held-out figures are
   the "(CV)" rows.

Verdict per kind and backend: normalised fusion with its cross-validated weights against rank
fusion as it searches today, by recall@10: switch when the former's is higher, else (a tie too)
keep rank fusion. The line adds MRR, the questions each wins on recall@10 with a two-sided sign
test's p over them (with 166 questions a difference of one or two is noise: "within noise" when
p >= 0.05), and rank fusion's own cross-validated figures, for comparison only. With `both`, a
kind switches only when both backends say so.

What differs from the messages of bench/retrieval.py: a chunk or entry is the turn's text alone,
without the speaker's name or its date in words, and with no conversation step (the neighbour and
session shares rank messages only), so speaker, temporal, adjacent and session questions are
harder here, for both fusions alike. The items are all created during the run, so the recency
bonus is about the same for each. No similarity floor applies (as in bench/retrieval.py).

Run it with:
    .venv/bin/python bench/fusion_by_kind.py [--backend sqlite|postgres|both] [--set PATH]
        [--kinds chunk,entry] [--quick] [--json OUT] [--pg-database NAME]
--quick keeps the first conversations (retrieval.QUICK_CONVERSATIONS): a check that the chain
works, in seconds. SQLite uses a temporary data directory; PostgreSQL a database
`memory_console_fusion_kind` (or --pg-database) on postgres@127.0.0.1:5432, created afresh and
dropped afterwards. `both` (the default) runs each backend in its own process, since Django binds
one database per process, then repeats the verdicts of both; --json then holds
{"backends": {"sqlite": …, "postgres": …}}. With BENCH_RESULTS=FILE set, the headline figures
are appended to FILE as JSON lines (common.record).
"""

import argparse
import json
import math
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

from common import record
from multisession_data import SET_PATH
from retrieval import (
    EMBEDDERS,
    embed_everything,
    installation,
    quiet_http_logs,
    run_per_backend,
    set_for_run,
)
from retrieval_tuning import SELECT_BY, Tuner
from search import store_document

PG_DATABASE = "memory_console_fusion_kind"
KINDS = ("chunk", "entry")
EMBEDDER = next(embedder for embedder in EMBEDDERS if embedder.model == "local:minilm-onnx")
# Normalised fusion's (lexical, vector) weights to choose from. The settings' pair (the
# messages' default, 1:2) is tried first and wins ties; 0.5:1 keeps 1:2's ratio with twice the
# recency bonus's relative weight.
WEIGHT_GRID = ((1.0, 2.0), (1.0, 1.0), (0.5, 1.0), (2.0, 1.0), (1.0, 4.0), (4.0, 1.0), (1.0, 8.0))
# Rank fusion's (lexical, vector) weights, cross-validated the same way for comparison only: the
# verdict weighs normalised fusion against rank fusion as it searches today (the settings' pair,
# 0.5:1, tried first).
RANK_GRID = ((0.5, 1.0), (0.25, 1.0), (1.0, 1.0), (2.0, 1.0))
TUNED = "lexical:vector"  # the one field the Tuner searches: a weight pair
METRICS = ("R@5", "R@10", "R@20", "MRR", "nDCG@10")
SIGNIFICANT = 0.05  # a sign test's p below this says the fusions differ on recall@10
SHOWN_TYPES = ("exact", "paraphrase", "adjacent", "session", "multi_hop", "temporal", "speaker")


@dataclass(frozen=True)
class Mode:
    """One way of searching a kind: the signals and the fusion weights."""

    label: str
    signals: tuple[str, ...]
    weights: object  # FusionWeights (imported once Django is set up)
    fusion: str = ""  # "rank" or "normalised"; empty for a single signal
    pair: tuple[float, float] | None = None  # that fusion's (lexical, vector) weights


def parse_args() -> argparse.Namespace:
    """Read the command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    parser.add_argument("--set", type=Path, default=SET_PATH, help="the labelled set (JSON)")
    parser.add_argument("--kinds", default=",".join(KINDS), help="comma-separated: chunk,entry")
    parser.add_argument("--quick", action="store_true", help="the first few conversations only")
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    parser.add_argument(
        "--pg-database", default=PG_DATABASE, help="the scratch PostgreSQL database's name"
    )
    args = parser.parse_args()
    args.kind_list = [kind.strip() for kind in args.kinds.split(",") if kind.strip()]
    unknown = sorted(set(args.kind_list) - set(KINDS))
    if unknown or not args.kind_list:
        named = ", ".join(unknown) or "(none given)"
        parser.error(f"--kinds: unknown {named}; choose from {', '.join(KINDS)}")
    return args


def log(text: str) -> None:
    """Print a progress line to stderr, keeping stdout for the figures."""
    print(f"[fusion_by_kind] {text}", file=sys.stderr, flush=True)


def pair_label(pair: tuple[float, float]) -> str:
    return ":".join(f"{weight:g}" for weight in pair)


# --- Loading --------------------------------------------------------------------------------


@dataclass
class Loaded:
    """Where the set landed: per conversation its knowledge base and resource, per kind the
    search item of each turn ("session:turn")."""

    project: object
    agent: object
    knowledge_bases: dict  # conversation id -> KnowledgeBase
    resources: dict  # conversation id -> Resource
    items: dict  # kind -> {"session:turn": SearchItem id}
    stored: dict  # kind -> {"session:turn": chunk id or entry id}


def load(data: dict, kinds: list[str]) -> Loaded:
    """Store the set's turns as chunks and entries (as kinds asks) through the services."""
    from apps.tenancy.services import agent_get_or_create, project_get_or_create

    project, _ = project_get_or_create(slug="fusion-by-kind")
    agent, _ = agent_get_or_create(project=project, slug="assistant")
    loaded = Loaded(project, agent, {}, {}, {}, {})
    if "chunk" in kinds:
        started = time.monotonic()
        load_chunks(loaded, data)
        log(f"stored {len(loaded.stored['chunk'])} chunks in {time.monotonic() - started:.1f} s")
    if "entry" in kinds:
        started = time.monotonic()
        load_entries(loaded, data)
        entries = len(set(loaded.stored["entry"].values()))
        turns = len(loaded.stored["entry"])
        log(f"stored {entries} entries for {turns} turns in {time.monotonic() - started:.1f} s")
    return loaded


def load_chunks(loaded: Loaded, data: dict) -> None:
    """A knowledge base per conversation, a ready document per session, a chunk per turn."""
    from django.utils.text import slugify

    from apps.knowledge.services import knowledge_base_get_or_create
    from apps.search.models import ItemKind, SearchItem

    stored = loaded.stored.setdefault("chunk", {})
    for conversation in data["conversations"]:
        kb = knowledge_base_get_or_create(
            project=loaded.project, slug=slugify(conversation["id"])[:64], actor="bench"
        )
        loaded.knowledge_bases[conversation["id"]] = kb
        for session in conversation["sessions"]:
            chunks = store_document(
                kb,
                f"{conversation['user']}, {session['id']}",
                [turn["content"] for turn in session["turns"]],
                [
                    {"session": session["id"], "turn": index, "role": turn["role"]}
                    for index, turn in enumerate(session["turns"])
                ],
            )
            for index, chunk in enumerate(chunks):
                stored[f"{session['id']}:{index}"] = chunk.id
    by_chunk = dict(
        SearchItem.objects.filter(kind=ItemKind.CHUNK, chunk_id__in=stored.values()).values_list(
            "chunk_id", "id"
        )
    )
    loaded.items["chunk"] = {key: by_chunk[chunk_id] for key, chunk_id in stored.items()}


def load_entries(loaded: Loaded, data: dict) -> None:
    """An approved entry per turn for the conversation's user (identical turns share one)."""
    from apps.episodic.models import EntrySource
    from apps.episodic.services import entry_create
    from apps.memconfig.services import config_update
    from apps.search.models import ItemKind, SearchItem
    from apps.tenancy.services import resource_get_or_create

    stored = loaded.stored.setdefault("entry", {})
    agent = loaded.agent
    config_update(agent=agent, changes={"episodic_approval_required": False}, changed_by="bench")
    for conversation in data["conversations"]:
        resource = resource_get_or_create(
            project=loaded.project, external_id=conversation["resource"]
        )
        loaded.resources[conversation["id"]] = resource
        for session in conversation["sessions"]:
            for index, turn in enumerate(session["turns"]):
                result = entry_create(
                    agent=agent,
                    resource=resource,
                    content=turn["content"],
                    source=EntrySource.API,
                    metadata={"session": session["id"], "turn": index, "role": turn["role"]},
                    actor="bench",
                )
                stored[f"{session['id']}:{index}"] = result.entry.id
    # Back to the default: the entries are approved and stay so.
    config_update(agent=agent, changes={"episodic_approval_required": None}, changed_by="bench")
    by_entry = dict(
        SearchItem.objects.filter(kind=ItemKind.ENTRY, entry_id__in=stored.values()).values_list(
            "entry_id", "id"
        )
    )
    loaded.items["entry"] = {key: by_entry[entry_id] for key, entry_id in stored.items()}


# --- Searching and scoring ------------------------------------------------------------------


def modes_for(kind: str) -> list[Mode]:
    """Lexical only, vector only, and each fusion at each of its weight pairs, for kind.

    The first mode of each fusion has the settings' weights: "rank fusion" is today's search
    of chunks and entries.
    """
    from apps.search.selectors import default_weights

    default = default_weights()
    ranked = replace(default, normalized_kinds=default.normalized_kinds - {kind})
    found = [Mode("lexical", ("lexical",), ranked), Mode("vector", ("vector",), ranked)]
    for number, pair in enumerate(weight_grid(default, "rank")):
        weights = replace(ranked, lexical=pair[0], vector=pair[1])
        label = "rank fusion" if number == 0 else f"rank {pair_label(pair)}"
        found.append(Mode(label, ("lexical", "vector"), weights, "rank", pair))
    for pair in weight_grid(default, "normalised"):
        weights = replace(
            default,
            normalized_kinds=default.normalized_kinds | {kind},
            normalized_lexical=pair[0],
            normalized_vector=pair[1],
        )
        label = f"normalised {pair_label(pair)}"
        found.append(Mode(label, ("lexical", "vector"), weights, "normalised", pair))
    return found


def weight_grid(default, fusion: str) -> list[tuple[float, float]]:
    """A fusion's weight pairs to choose from, the settings' pair first (it wins ties)."""
    if fusion == "rank":
        first, grid = (default.lexical, default.vector), RANK_GRID
    else:
        first, grid = (default.normalized_lexical, default.normalized_vector), WEIGHT_GRID
    return [first] + [pair for pair in grid if pair != first]


def scope_for(loaded: Loaded, kind: str, conversation: str):
    """The search scope of a question: its conversation's knowledge base, or its user's entries."""
    from apps.search.scope import Scope

    if kind == "chunk":
        kb = loaded.knowledge_bases[conversation]
        return Scope(kind=kind, project_id=loaded.project.id, knowledge_base_ids=(kb.id,))
    return Scope(
        kind=kind,
        project_id=loaded.project.id,
        agent_id=loaded.agent.id,
        resource_id=loaded.resources[conversation].id,
    )


def item_grades(loaded: Loaded, kind: str, question: dict) -> dict[str, int]:
    """The question's grades by search item (a turn's grade goes to its chunk or entry)."""
    from apps.evaluation.retrieval import grades_of

    grades: dict[str, int] = {}
    for key, grade in grades_of(question).items():
        item = str(loaded.items[kind][key])
        grades[item] = max(grade, grades.get(item, 0))
    return grades


def question_vectors(loaded: Loaded, questions: list[dict]) -> dict:
    """Each question's vector under the project's serving index; fail if the embedder does."""
    from apps.evaluation.retrieval import question_text
    from apps.search.selectors import query_embed

    vectors = {}
    for question in questions:
        embedded = query_embed(project_id=loaded.project.id, query=question_text(question))
        if embedded.vector is None:
            raise SystemExit(f"question {question['id']} has no vector: the embedder failed")
        vectors[question["id"]] = embedded.vector
    return vectors


def evaluate(loaded: Loaded, kind: str, questions: list, modes: list[Mode], vectors: dict) -> dict:
    """Return {question id: {mode label: metrics}} for one kind."""
    from apps.evaluation.retrieval import TOP_K, question_text, score
    from apps.search.selectors import rank

    rows = {}
    for question in questions:
        scope = scope_for(loaded, kind, question["conversation"])
        grades = item_grades(loaded, kind, question)
        row = {}
        for mode in modes:
            found = rank(
                scopes=[scope],
                query=question_text(question),
                top_k=TOP_K,
                vector=vectors[question["id"]] if "vector" in mode.signals else None,
                weights=mode.weights,
                signals=mode.signals,
            )
            row[mode.label] = score([str(entry.item_id) for entry in found], grades)
        rows[question["id"]] = row
    return rows


def means(rows: list[dict]) -> dict:
    """Mean of each metric over per-question metrics."""
    return {metric: sum(row[metric] for row in rows) / len(rows) for metric in METRICS}


def sign_test(wins: int, losses: int) -> float:
    """Two-sided sign test: the chance of a split at least this uneven if neither is better."""
    n = wins + losses
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(wins, losses) + 1)) / 2**n
    return min(1.0, 2 * tail)


def measure_kind(loaded: Loaded, kind: str, questions: list, vectors: dict) -> dict:
    """Search every question in every mode; cross-validate each fusion's weight pair."""
    started = time.monotonic()
    modes = modes_for(kind)
    rows = evaluate(loaded, kind, questions, modes, vectors)
    searched = time.monotonic() - started
    log(f"{kind}: {len(rows) * len(modes)} searches in {searched:.1f} s")
    ids = [q["id"] for q in questions]
    conversations = {q["id"]: q["conversation"] for q in questions}
    table = {mode.label: means([rows[q][mode.label] for q in ids]) for mode in modes}
    tuning, held_out = {}, {}
    for fusion in ("rank", "normalised"):
        tuning[fusion], held_out[fusion] = cross_validate(rows, modes, fusion, conversations)
        table[f"{fusion} (CV)"] = means([held_out[fusion][q] for q in ids])
    crossed, rank_rows = held_out["normalised"], {q: rows[q]["rank fusion"] for q in ids}
    wins = sum(crossed[q]["R@10"] > rank_rows[q]["R@10"] for q in ids)
    losses = sum(crossed[q]["R@10"] < rank_rows[q]["R@10"] for q in ids)
    types = {}
    for kind_of_question in SHOWN_TYPES:
        chosen = [q["id"] for q in questions if q["type"] == kind_of_question]
        if chosen:
            types[kind_of_question] = {
                "n": len(chosen),
                "rank fusion": means([rank_rows[q] for q in chosen])["R@10"],
                "normalised (CV)": means([crossed[q] for q in chosen])["R@10"],
            }
    return {
        "modes": [mode.label for mode in modes],
        "table": table,
        "by_type_R@10": types,
        "tuning": tuning,
        "wins": wins,
        "losses": losses,
        "sign_test_p": sign_test(wins, losses),
        "questions": rows,
        "search_seconds": round(searched, 1),
    }


def cross_validate(rows: dict, modes: list[Mode], fusion: str, conversations: dict):
    """Choose one fusion's weight pair leaving one conversation out (bench/retrieval_tuning.py).

    Return the folds and choices, and each question's metrics under the pair its fold chose.
    """
    by_pair = {mode.pair: mode.label for mode in modes if mode.fusion == fusion}

    def evaluate_point(values: dict) -> dict:
        label = by_pair[values[TUNED]]
        return {q: row[label] for q, row in rows.items()}

    tuner = Tuner(evaluate_point, {TUNED: list(by_pair)}, conversations, SELECT_BY[0])
    found = tuner.cross_validate()
    folds = [
        {
            "held_out": fold["held_out"],
            "weights": pair_label(fold["values"][TUNED]),
            "train_R@10": fold["train"],
            "held_out_R@10": fold["test"],
        }
        for fold in found["folds"]
    ]
    summary_of_choices = {
        "grid": [pair_label(pair) for pair in by_pair],
        "folds": folds,
        "in_sample_weights": pair_label(dict(found["in_sample"])[TUNED]),
        "most_chosen_weights": pair_label(found["most_chosen"][TUNED]),
    }
    return summary_of_choices, found["held_out_rows"]


# --- Reporting ------------------------------------------------------------------------------


def print_kind(kind: str, result: dict, n: int) -> None:
    """Print one kind's table of modes, its per-type recall@10 and each fusion's folds."""
    print(f"== kind {kind}: {n} questions, top 20, embedder {EMBEDDER.model}")
    header = f"{'mode':<22}" + "".join(f"{metric:>9}" for metric in METRICS)
    print(header)
    print("-" * len(header))
    for label, figures in result["table"].items():
        print(f"{label:<22}" + "".join(f"{figures[metric]:>9.3f}" for metric in METRICS))
    print(f"\nrecall@10 by question type{'':<4}{'n':>4}{'rank':>9}{'norm CV':>9}")
    for kind_of_question, figures in result["by_type_R@10"].items():
        print(
            f"  {kind_of_question:<28}{figures['n']:>4}"
            f"{figures['rank fusion']:>9.3f}{figures['normalised (CV)']:>9.3f}"
        )
    for fusion, tuning in result["tuning"].items():
        print(f"\n{fusion} fusion's weights per fold (lexical:vector, by recall@10 on the others):")
        for fold in tuning["folds"]:
            print(
                f"  held out {fold['held_out']:<20} {fold['weights']:<6} train "
                f"{fold['train_R@10']:.3f}, held out {fold['held_out_R@10']:.3f}"
            )
        print(
            f"  most often chosen: {tuning['most_chosen_weights']}; "
            f"in-sample best: {tuning['in_sample_weights']}"
        )
    print()


def verdict(kind: str, result: dict, backend: str) -> str:
    """Return (and record) the kind's verdict: keep rank fusion, or switch to normalised.

    Normalised fusion, its weights cross-validated, against rank fusion as it searches today
    (the settings' weights): switch only when its recall@10 is higher; a tie keeps what is.
    """
    table = result["table"]
    rank_figures, crossed = table["rank fusion"], table["normalised (CV)"]
    result["verdict"] = "switch" if crossed["R@10"] > rank_figures["R@10"] else "keep rank fusion"
    for label in ("rank fusion", "normalised (CV)", "rank (CV)"):
        for metric in ("R@10", "MRR"):
            name = "recall@10" if metric == "R@10" else metric
            record("fusion_by_kind", backend, f"{kind}, {label}", name, table[label][metric], "")
    weights = result["tuning"]["normalised"]["most_chosen_weights"]
    noise = "" if result["sign_test_p"] < SIGNIFICANT else ", within noise"
    return (
        f"{kind}: rank fusion {rank_figures['R@10']:.3f} vs normalised (CV) "
        f"{crossed['R@10']:.3f} (recall@10) → {result['verdict']}. "
        f"MRR {rank_figures['MRR']:.3f} vs {crossed['MRR']:.3f}; normalised weights most "
        f"chosen {weights}; normalised better on "
        f"{result['wins']}, worse on {result['losses']} questions (sign test p "
        f"{result['sign_test_p']:.2f}{noise}); rank fusion with its own weights cross-validated: "
        f"recall@10 {table['rank (CV)']['R@10']:.3f}, MRR {table['rank (CV)']['MRR']:.3f}"
    )


def main() -> None:
    """Load the set as chunks and entries, embed, search every question, print the verdicts."""
    args = parse_args()
    if args.backend == "both":
        run_both(args)
        return
    started = time.monotonic()
    data, facts = set_for_run(args.set, args.quick)
    print(f"backend {args.backend}, kinds {', '.join(args.kind_list)}\n")
    results = {"backend": args.backend, "set": str(args.set), "summary": facts, "kinds": {}}
    with installation(args.backend, args.pg_database):
        quiet_http_logs()
        check_embedder()
        loaded = load(data, args.kind_list)
        embedding = time.monotonic()
        embed_everything(loaded.project, EMBEDDER)
        log(f"embedded with {EMBEDDER.model} in {time.monotonic() - embedding:.1f} s")
        vectors = question_vectors(loaded, data["questions"])
        describe_weights()
        lines = []
        for kind in args.kind_list:
            result = measure_kind(loaded, kind, data["questions"], vectors)
            print_kind(kind, result, len(data["questions"]))
            lines.append(f"[{args.backend}] " + verdict(kind, result, args.backend))
            results["kinds"][kind] = result
    print("\n".join(lines))
    results["verdicts"] = lines
    elapsed = time.monotonic() - started
    print(f"\nrun time {elapsed:.1f} s")
    results["run_seconds"] = round(elapsed, 1)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")
        log(f"wrote {args.json}")


def check_embedder() -> None:
    """Stop with the reason when the local ONNX model cannot be built here."""
    from apps.providers.embeddings import embedder_for
    from apps.providers.errors import EmbeddingError

    try:
        embedder_for(EMBEDDER.model, EMBEDDER.dims)
    except EmbeddingError as error:
        raise SystemExit(f"{EMBEDDER.model} is not available here: {error}") from error


def describe_weights() -> None:
    """Print the weights every mode shares and those fusion by rank uses."""
    from apps.search.selectors import default_weights

    weights = default_weights()
    print(
        f"rank fusion: lexical {weights.lexical:g}, vector {weights.vector:g}, k {weights.k}; "
        f"both fusions: recency {weights.recency:g} (half-life {weights.half_life_days:g} days)"
    )
    for fusion in ("rank", "normalised"):
        pairs = ", ".join(pair_label(pair) for pair in weight_grid(weights, fusion))
        print(f"{fusion} fusion's weights tried (lexical:vector, the settings' first): {pairs}")
    print()


def run_both(args: argparse.Namespace) -> None:
    """Run on SQLite, then PostgreSQL, each in a child process; merge the JSON and verdicts."""
    started = time.monotonic()
    options = ["--set", str(args.set), "--kinds", ",".join(args.kind_list)]
    options += ["--pg-database", args.pg_database] + (["--quick"] if args.quick else [])
    results = run_per_backend(__file__, options, "mc-fusion-kind-both-")
    print("== verdicts of both backends")
    for result in results.values():
        print("\n".join(result["verdicts"]))
    print()
    for kind in args.kind_list:
        said = {backend: result["kinds"][kind]["verdict"] for backend, result in results.items()}
        overall = "switch" if set(said.values()) == {"switch"} else "keep rank fusion"
        detail = "both backends" if len(set(said.values())) == 1 else f"backends differ: {said}"
        print(f"{kind}: {overall} ({detail})")
    print(f"\nrun time, both backends: {time.monotonic() - started:.1f} s")
    if args.json:
        args.json.write_text(json.dumps({"backends": results}, indent=1) + "\n")
        log(f"wrote {args.json}")


if __name__ == "__main__":
    main()
