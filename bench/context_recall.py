"""What the agent sees: how often the context carries the evidence a question needs.

The labelled multi-session set (bench/data/multisession_set.json: 12 conversations of 309-358
messages, one thread each, 166 questions whose answering turns are labelled) is loaded through
the real write path, as bench/retrieval.py loads it. For each question and each budget B
(2,000 / 4,000 / 8,000 tokens) three things an agent could send its model are compared, all
computed in the same run:

- context: context_assemble(query=question, max_tokens=B), the service behind
  POST /threads/{id}/context, with the settings under test; what it gives is its
  system_prompt and its messages;
- last B tokens: the thread's newest messages that fit B, no memory at all;
- search hits: retrieve() over the thread's messages for the question (the door behind
  POST /search), as many hits as fit B, best first, no range around them.

A question's evidence is present when the text of one of its answering turns (grade 2) is in
what is sent (the system prompt with its escapes undone). Each is measured on two histories of
the same threads: "as loaded" (no observations: under the default observer threshold of 30k
tokens these threads are not observed yet) and "observed" (the observer, with no model, run
with observer_message_tokens 2,000, so all but the recent window are extractive observations).

Settings are chosen by leave-one-conversation-out cross-validation over a small grid (the
shares of recall and of the recent window, semantic_recall_top_k): for each conversation, the
grid point with the best mean presence on the other eleven (over both histories and all
budgets) is scored on it. The report gives, per budget and history, the two baselines, the
current defaults, the cross-validated figure and the point most often chosen (the suggested
defaults). Then gunicorn (2 workers x 4 threads) serves the database and every question is
sent once as POST /context at 4,000 tokens with the defaults: p50/p95 over HTTP.

--long N measures long threads: each conversation is followed in its thread by the sessions of
the next N conversations of the set (said by its own user, a day apart after its last session),
so its answers lie under weeks of later talk, as in a thread of months; the questions that name
a time relative to now ("yesterday", "last week") are left out, since the later sessions move
what they mean.

Run it:
    .venv/bin/python bench/context_recall.py [--backend sqlite|postgres|both]
        [--embedders none,local-onnx] [--no-tune] [--quick] [--long N] [--json OUT]
"""

import argparse
import copy
import html
import json
import os
import statistics
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

from common import Api, gunicorn, percentile, record
from multisession_data import SET_PATH
from retrieval import (
    EMBEDDERS,
    available,
    embed_everything,
    embedder_endpoint,
    installation,
    quiet_http_logs,
    run_per_backend,
    set_for_run,
)

ROOT = Path(__file__).resolve().parent.parent
PG_DATABASE = "memory_console_context_recall"
BUDGETS = (2000, 4000, 8000)
HISTORIES = ("as loaded", "observed")
OBSERVED_THRESHOLD = 2000
# The grid cross-validation chooses from: (recall share, recent share, semantic_recall_top_k).
GRID = [
    (recall, recent, top_k)
    for recall, recent in ((0.5, 0.15), (0.6, 0.1))
    for top_k in (20, 40, 60, 80, 100)
]
LATENCY_BUDGET = 4000
PORT = 8931


def log(text: str) -> None:
    print(f"[context_recall] {text}", file=sys.stderr, flush=True)


def point_changes(point) -> dict:
    recall, recent, top_k = point
    return {
        "context_share_recall": recall,
        "context_share_recent": recent,
        "semantic_recall_top_k": top_k,
    }


class Evidence:
    """The questions with their threads and the texts of their answering turns."""

    def __init__(self, data: dict, loaded):
        from apps.evaluation.retrieval import question_text
        from apps.threads.models import Message, Thread

        self.loaded = loaded
        by_key = {key: message_id for message_id, key in loaded.keys.items()}
        contents = dict(Message.objects.filter(id__in=by_key.values()).values_list("id", "content"))
        threads = {t.external_id: t for t in Thread.objects.filter(agent=loaded.agent)}
        self.questions = []
        for question in data["questions"]:
            answers = [
                contents[by_key[f"{r['session']}:{r['turn']}"]]
                for r in question["relevant"]
                if r["grade"] == 2
            ]
            shift = loaded.shifts[question["conversation"]]
            self.questions.append(
                {
                    "id": question["id"],
                    "conversation": question["conversation"],
                    "text": question_text(question, shift),
                    "thread": threads[question["conversation"]],
                    "answers": answers,
                }
            )


def lengthened(data: dict, others: int) -> dict:
    """The set with each conversation followed by the sessions of the next `others` ones (see
    the module's --long), without the questions of relative time."""
    from apps.search.temporal import without_relative_words

    conversations = data["conversations"]
    out = copy.deepcopy(data)
    for index, conversation in enumerate(out["conversations"]):
        name = next(
            turn["name"]
            for session in conversation["sessions"]
            for turn in session["turns"]
            if turn["role"] == "user" and turn.get("name")
        )
        end = max(
            datetime.fromisoformat(turn["created_at"])
            for session in conversation["sessions"]
            for turn in session["turns"]
        )
        day = 0
        for step in range(1, others + 1):
            other = conversations[(index + step) % len(conversations)]
            for session in other["sessions"]:
                day += 1
                start = datetime.fromisoformat(session["turns"][0]["created_at"])
                moved = end.replace(hour=start.hour, minute=start.minute) + timedelta(days=day)
                turns = []
                for turn in session["turns"]:
                    when = moved + (datetime.fromisoformat(turn["created_at"]) - start)
                    turn = {**turn, "created_at": when.isoformat()}
                    if turn["role"] == "user":
                        turn["name"] = name
                    turns.append(turn)
                conversation["sessions"].append(
                    {**session, "id": f"{conversation['id']}+{session['id']}", "turns": turns}
                )
    out["questions"] = [
        question
        for question in data["questions"]
        if "template" in question
        or without_relative_words(question["question"]).lower() == question["question"].lower()
    ]
    return out


def present(answers: list[str], text: str) -> bool:
    return any(answer in text for answer in answers)


def context_text(answer: dict) -> str:
    said = "\n".join(message["content"] for message in answer["messages"])
    return html.unescape(answer["system_prompt"]) + "\n" + said


def last_tokens(thread, budget: int) -> str:
    """The thread's newest messages that fit budget."""
    from apps.providers.tokens import count_message_tokens
    from apps.threads.models import Message

    texts, total = [], 0
    for content, payload in (
        Message.objects.filter(thread=thread).order_by("-seq").values_list("content", "payload")
    ):
        total += count_message_tokens(content, payload)
        if total > budget:
            break
        texts.append(content)
    return "\n".join(texts)


def search_hits(agent, thread, query: str) -> list[str]:
    from apps.retrieval.selectors import retrieve

    found = retrieve(
        agent=agent,
        query=query,
        scopes=["messages"],
        thread_id=thread.id,
        top_k=200,
        message_range=(0, 0),
    )
    return [hit.content for hit in found.hits]


def hits_within(hits: list[str], budget: int) -> str:
    from apps.providers.tokens import count_message_tokens

    texts, total = [], 0
    for content in hits:
        total += count_message_tokens(content, None)
        if total > budget:
            break
        texts.append(content)
    return "\n".join(texts)


def baselines(evidence: Evidence) -> dict:
    """Per question id, budget: whether the last B tokens / the search hits hold the evidence."""
    out = {}
    for question in evidence.questions:
        hits = search_hits(evidence.loaded.agent, question["thread"], question["text"])
        for budget in BUDGETS:
            out[(question["id"], budget)] = {
                "last": present(question["answers"], last_tokens(question["thread"], budget)),
                "search": present(question["answers"], hits_within(hits, budget)),
            }
    return out


def contexts(evidence: Evidence) -> dict:
    """Per question id, budget: whether the context holds the evidence (current settings)."""
    from apps.context.assembly import context_assemble

    out = {}
    for question in evidence.questions:
        for budget in BUDGETS:
            answer = context_assemble(
                agent=evidence.loaded.agent,
                thread=question["thread"],
                query=question["text"],
                max_tokens=budget,
            )
            out[(question["id"], budget)] = present(question["answers"], context_text(answer))
    return out


def configure(agent, changes: dict) -> None:
    from apps.memconfig.models import MemoryConfig
    from apps.memconfig.services import config_update

    current = MemoryConfig.objects.filter(agent=agent).first()
    values = dict(current.values) if current else {}
    values = {key: None for key in values if key.startswith(("context_share", "semantic_recall"))}
    config_update(agent=agent, changes={**values, **changes}, changed_by="bench")


def observe_all(evidence: Evidence) -> int:
    """Observe every thread with no model at OBSERVED_THRESHOLD; return the observations."""
    from apps.memconfig.selectors import config_effective
    from apps.observations.observer import thread_observe
    from apps.threads.models import Thread

    configure(evidence.loaded.agent, {})
    from apps.memconfig.services import config_update

    config_update(
        agent=evidence.loaded.agent,
        changes={"observer_message_tokens": OBSERVED_THRESHOLD},
        changed_by="bench",
    )
    config = config_effective(agent=evidence.loaded.agent)
    count = 0
    for thread in Thread.objects.filter(agent=evidence.loaded.agent):
        count += len(thread_observe(thread=thread, config=config, chat=None))
    return count


def rate(rows: dict, questions: list[dict], budget: int, key=None) -> float:
    hits = [(rows[(q["id"], budget)][key] if key else rows[(q["id"], budget)]) for q in questions]
    return sum(hits) / len(hits) if hits else 0.0


def cross_validate(evidence: Evidence, grid_rows: dict) -> dict:
    """Leave one conversation out: choose the grid point on the others, score the one left."""
    conversations = sorted({q["conversation"] for q in evidence.questions})
    held: dict = {}
    chosen = []

    def mean(point, questions):
        return statistics.mean(
            rate(grid_rows[(point, history)], questions, budget)
            for history in HISTORIES
            for budget in BUDGETS
        )

    for conversation in conversations:
        train = [q for q in evidence.questions if q["conversation"] != conversation]
        test = [q for q in evidence.questions if q["conversation"] == conversation]
        best = max(GRID, key=lambda point: (mean(point, train), point))
        chosen.append(best)
        for history in HISTORIES:
            for q in test:
                for budget in BUDGETS:
                    held[(history, q["id"], budget)] = grid_rows[(best, history)][(q["id"], budget)]
    figures = {
        history: {
            budget: statistics.mean(held[(history, q["id"], budget)] for q in evidence.questions)
            for budget in BUDGETS
        }
        for history in HISTORIES
    }
    most = max(set(chosen), key=chosen.count)
    return {"figures": figures, "chosen": chosen, "most_chosen": most}


def latency(evidence: Evidence, key: str) -> dict:
    """POST /context for every question at LATENCY_BUDGET tokens through gunicorn."""
    env = {**os.environ, "API_RATE_LIMIT": "", "LOG_LEVEL": "WARNING", "LOG_FORMAT": "plain"}
    timings = []
    with gunicorn(env, PORT) as base_url:
        session = Api(base_url, key).session()
        for question in evidence.questions[:20]:  # warm-up
            session.post(
                f"{base_url}/api/v1/threads/{question['thread'].id}/context",
                json={"query": question["text"], "max_tokens": LATENCY_BUDGET},
            )
        for question in evidence.questions:
            start = time.perf_counter()
            response = session.post(
                f"{base_url}/api/v1/threads/{question['thread'].id}/context",
                json={"query": question["text"], "max_tokens": LATENCY_BUDGET},
            )
            timings.append((time.perf_counter() - start) * 1000)
            if response.status_code != 200:
                raise RuntimeError(f"context answered {response.status_code}: {response.text}")
    return {"p50": percentile(timings, 50), "p95": percentile(timings, 95)}


def api_key(agent) -> str:
    from apps.tenancy.services import api_key_issue

    return api_key_issue(agent=agent, name="bench").secret


def run_history(evidence: Evidence, history: str, tune: bool) -> dict:
    """Measure the defaults and, with tune, every grid point on the threads as they are."""
    rows = {"defaults": None, "grid": {}}
    configure(evidence.loaded.agent, {})
    rows["defaults"] = contexts(evidence)
    if tune:
        for point in GRID:
            configure(evidence.loaded.agent, point_changes(point))
            rows["grid"][point] = contexts(evidence)
        configure(evidence.loaded.agent, {})
    return rows


def analyze() -> None:
    """ANALYZE on PostgreSQL after loading, as autovacuum would in time (the other benchmarks
    do the same): a freshly loaded thread's search plans are otherwise guesses (measured: the
    recall search took 29 ms before, 14 ms after)."""
    from django.db import connection

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")


def run_embedder(evidence: Evidence, label: str, args, results: dict) -> None:
    started = time.monotonic()
    analyze()
    measured = {"as loaded": run_history(evidence, "as loaded", not args.no_tune)}
    base = {"as loaded": baselines(evidence)}
    count = observe_all(evidence)
    analyze()
    log(f"{label}: {count} observations formed")
    measured["observed"] = run_history(evidence, "observed", not args.no_tune)
    base["observed"] = base["as loaded"]  # the messages, and so both baselines, are the same
    questions = evidence.questions
    table = {}
    for history in HISTORIES:
        for budget in BUDGETS:
            table[f"{history} {budget}"] = {
                "last": rate(base[history], questions, budget, "last"),
                "search": rate(base[history], questions, budget, "search"),
                "context": rate(measured[history]["defaults"], questions, budget),
            }
    out = {"table": table, "questions": len(questions)}
    if not args.no_tune:
        grid_rows = {
            (point, history): measured[history]["grid"][point]
            for point in GRID
            for history in HISTORIES
        }
        cv = cross_validate(evidence, grid_rows)
        out["grid"] = {
            json.dumps(point_changes(point)): {
                f"{history} {budget}": rate(grid_rows[(point, history)], questions, budget)
                for history in HISTORIES
                for budget in BUDGETS
            }
            for point in GRID
        }
        out["cross_validated"] = cv["figures"]
        out["most_chosen"] = point_changes(cv["most_chosen"])
        out["chosen"] = [point_changes(p) for p in cv["chosen"]]
    out["latency"] = latency(evidence, api_key(evidence.loaded.agent))
    out["seconds"] = round(time.monotonic() - started, 1)
    results[label] = out
    print_table(label, out, args.backend)


def print_table(label: str, out: dict, backend: str) -> None:
    print(f"\n{backend}, {label}: evidence present in what is sent ({out['questions']} questions)")
    print(f"{'history, budget':<22}{'last B':>8}{'search':>8}{'context':>9}{'cv':>7}")
    for history in HISTORIES:
        for budget in BUDGETS:
            row = out["table"][f"{history} {budget}"]
            cv = out.get("cross_validated", {}).get(history, {}).get(budget)
            cv_text = f"{cv:7.0%}" if cv is not None else "      -"
            print(
                f"{history + ', ' + str(budget):<22}{row['last']:8.0%}{row['search']:8.0%}"
                f"{row['context']:9.0%}{cv_text}"
            )
            record(
                "context_recall",
                backend,
                f"{label}, {history}",
                f"context evidence @{budget}",
                row["context"] * 100,
                "%",
            )
    if "grid" in out:
        print("in-sample, per grid point:")
        for point, figures in out["grid"].items():
            print(f"  {point}: " + " ".join(f"{value:.0%}" for value in figures.values()))
    if "most_chosen" in out:
        print(f"most often chosen: {out['most_chosen']}")
    lat = out["latency"]
    print(
        f"POST /context at {LATENCY_BUDGET} tokens, HTTP: p50 {lat['p50']:.1f} ms, "
        f"p95 {lat['p95']:.1f} ms"
    )
    record("context_recall", backend, label, "context p95", lat["p95"], "ms", ("<=", 30))


def main() -> None:
    args = parse_args()
    if args.backend == "both":
        options = ["--embedders", args.embedders] + (["--no-tune"] if args.no_tune else [])
        options += ["--quick"] if args.quick else []
        options += ["--long", str(args.long)] if args.long else []
        results = run_per_backend(__file__, options, "mc-context-recall-")
        if args.json:
            args.json.write_text(json.dumps(results, indent=1, default=str) + "\n")
        return
    data, _ = set_for_run(SET_PATH, args.quick)
    results: dict = {"backend": args.backend}
    with installation(args.backend, PG_DATABASE):
        quiet_http_logs()
        from apps.evaluation.retrieval import load_conversations, time_shifts
        from apps.tenancy.services import project_get_or_create

        if args.long:
            data = lengthened(data, args.long)
            count = len(data["questions"])
            log(f"long threads: {args.long} conversations after each, {count} questions")
        long = f", long threads (+{args.long})" if args.long else ""
        wanted = [name for name in args.embedders.split(",") if name]
        for name in wanted:
            project, _ = project_get_or_create(slug=f"context-recall-{name}")
            loaded = load_conversations(data, time_shifts(data, True), project=project)
            evidence = Evidence(data, loaded)
            if name == "none":
                run_embedder(evidence, "full-text" + long, args, results)
                continue
            embedders = available([e for e in EMBEDDERS if e.name == name])
            for embedder in embedders:
                with embedder_endpoint(embedder):
                    embed_everything(project, embedder)
                    run_embedder(evidence, embedder.name + long, args, results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, default=str) + "\n")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", choices=("sqlite", "postgres", "both"), default="both")
    parser.add_argument(
        "--embedders", default="none", help="none and/or local-onnx, comma-separated"
    )
    parser.add_argument("--no-tune", action="store_true")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--long", type=int, default=0, help="follow each conversation by the next N (long threads)"
    )
    parser.add_argument("--json", type=Path)
    return parser.parse_args()


if __name__ == "__main__":
    main()
