"""Measure how well search finds the labelled answers of a retrieval set.

A set (bench/data/retrieval_set.json, bench/data/multisession_set.json) holds multi-session
conversations and questions whose answering messages are labelled by "session:turn" with a grade
(2 = the answer, 1 = support). It is loaded through the real write path into a project: a thread
per session, or one thread per conversation when the conversation says "thread": "single" (its
sessions then apart only in time, or as runs when a session says "run": true), each turn with
its speaker's `name` when it has one. Every question is asked with the search service scoped to
its user's messages, by each signal alone and fused.
"""

import json
import math
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path

from django.utils import timezone

from apps.evaluation.dates import date_fields
from apps.search.fusion import FusionWeights
from apps.search.scope import Scope
from apps.search.selectors import default_weights, query_embed, search
from apps.tenancy.models import Agent, Project
from apps.tenancy.services import agent_get_or_create
from apps.threads.models import RunStatus
from apps.threads.services import (
    MessageInput,
    run_finish,
    run_start,
    thread_append_messages,
    thread_resolve_or_create,
)

TOP_K = 20
# A labelled question is asked this long after its conversation's newest message.
ASKED_AFTER = timedelta(hours=1)
CUTOFFS = (5, 10, 20)
TYPES_ORDER = (
    "exact",
    "paraphrase",
    "adjacent",
    "session",
    "multi_hop",
    "temporal",
    "speaker",
    "all",
)
METRICS = ("R@5", "R@10", "R@20", "MRR", "nDCG@10")


@dataclass(frozen=True)
class Mode:
    """One way of searching: which signals, with which fusion weights."""

    label: str
    signals: tuple[str, ...]
    weights: FusionWeights
    group: str  # modes of one group share weights; the verdict compares within a group


@dataclass
class Loaded:
    """Where the set landed: the project, the agent, resources and message ids."""

    project: Project
    agent: Agent
    resources: dict
    keys: dict  # message id -> "session:turn"
    shifts: dict = field(default_factory=dict)  # conversation id -> timedelta added to its times
    # conversation id -> when its questions are asked: an hour after its newest message (moved)
    asked_at: dict = field(default_factory=dict)


def set_load(path: Path) -> dict:
    return json.loads(Path(path).read_text())


def time_shifts(data: dict, enabled: bool) -> dict[str, timedelta]:
    """Return, per conversation, what to add to its timestamps so its newest is recent.

    The shift is whole weeks, so a weekday stays the same weekday: the newest message ends up
    an hour to a week old. The questions are asked as of an hour after it (Loaded.asked_at), so
    the recency bonus sees the same ages whatever the hour of a run: counted from the wall
    clock, recall@10 on the multi-session set moved between 0.717 and 0.729 from run to run.
    """
    shifts = {}
    for conversation in data["conversations"]:
        weeks = (timezone.now() - ASKED_AFTER - _newest(conversation)) // timedelta(weeks=1)
        shifts[conversation["id"]] = timedelta(weeks=weeks) if enabled else timedelta(0)
    return shifts


def load_conversations(data: dict, shifts: dict[str, timedelta], *, project: Project) -> Loaded:
    """Store every session through the services: a thread per session, a resource per user."""
    agent, _ = agent_get_or_create(project=project, slug="assistant")
    loaded = Loaded(project, agent, {}, {}, shifts)
    for conversation in data["conversations"]:
        single = conversation.get("thread") == "single"
        user = conversation["user"]
        for session in conversation["sessions"]:
            thread, _ = thread_resolve_or_create(
                agent=agent,
                resource_id=conversation["resource"],
                external_id=conversation["id"] if single else session["id"],
                title=user if single else f"{user}, {session['id']}",
            )
            loaded.resources[conversation["id"]] = thread.resource_id
            session_append(loaded, thread, session, shifts[conversation["id"]])
        moved = _newest(conversation) + shifts[conversation["id"]]
        loaded.asked_at[conversation["id"]] = moved + ASKED_AFTER
    return loaded


def _newest(conversation: dict) -> datetime:
    return max(
        datetime.fromisoformat(turn["created_at"])
        for session in conversation["sessions"]
        for turn in session["turns"]
    )


def session_append(loaded: Loaded, thread, session: dict, shift: timedelta) -> None:
    """Append one labelled session's turns to thread (in a run when the set says so), their
    times moved by shift, and record in loaded which turn each new message is."""
    run = run_start(thread=thread, name=session["id"]) if session.get("run") else None
    items = [
        MessageInput(
            role=turn["role"],
            content=turn["content"],
            name=turn.get("name", ""),
            created_at=datetime.fromisoformat(turn["created_at"]) + shift,
            run_id=run.id if run else None,
        )
        for turn in session["turns"]
    ]
    appended = thread_append_messages(agent=loaded.agent, thread_id=thread.id, items=items)
    for index, result in enumerate(appended):
        loaded.keys[result.message.id] = f"{session['id']}:{index}"
    if run is not None:
        run_finish(run=run, status=RunStatus.SUCCEEDED)


def question_text(question: dict, shift: timedelta = timedelta(0)) -> str:
    """Return the question as asked: a dated one names its anchor moment as moved by shift."""
    if "template" not in question:
        return question["question"]
    return question["template"].format_map(
        date_fields(datetime.fromisoformat(question["anchor"]) + shift)
    )


def standard_modes(weights: FusionWeights | None = None, group: str = "default") -> list[Mode]:
    """Return lexical only, vector only and fused, all with the given (or current) weights."""
    weights = weights or default_weights()
    suffix = "" if group == "default" else f" {group}"
    return [
        Mode(f"lexical{suffix}", ("lexical",), weights, group),
        Mode(f"vector{suffix}", ("vector",), weights, group),
        Mode(f"fused{suffix}", ("lexical", "vector"), weights, group),
    ]


def without_recency(weights: FusionWeights) -> FusionWeights:
    return replace(weights, recency=0.0)


def ranked_keys(loaded: Loaded, question: dict, mode: Mode, vector) -> list[str]:
    """Return the label keys ("session:turn") of the top results, best first."""
    scope = Scope(
        kind="message",
        project_id=loaded.project.id,
        agent_id=loaded.agent.id,
        resource_id=loaded.resources[question["conversation"]],
    )
    hits = search(
        scopes=[scope],
        query=question_text(question, loaded.shifts.get(question["conversation"], timedelta(0))),
        top_k=TOP_K,
        vector=vector if "vector" in mode.signals else None,
        weights=mode.weights,
        signals=mode.signals,
        as_of=loaded.asked_at.get(question["conversation"]),
    )
    return [loaded.keys.get(hit.item.message_id, "?") for hit in hits]


def grades_of(question: dict) -> dict[str, int]:
    """Return the question's graded messages by label key."""
    return {f"{r['session']}:{r['turn']}": r["grade"] for r in question["relevant"]}


def score(ranked: list[str], grades: dict[str, int]) -> dict[str, float]:
    """Return recall@5/10/20, MRR (answers, grade 2) and nDCG@10 (all grades) of one ranking."""
    answers = {key for key, grade in grades.items() if grade == 2}
    metrics = {f"R@{k}": len(answers & set(ranked[:k])) / len(answers) for k in CUTOFFS}
    first = next((i for i, key in enumerate(ranked, start=1) if key in answers), None)
    metrics["MRR"] = 1 / first if first else 0.0
    metrics["nDCG@10"] = ndcg(ranked[:10], grades)
    return metrics


def ndcg(ranked: list[str], grades: dict[str, int]) -> float:
    """Return the normalised discounted cumulative gain of a ranking (gain 2^grade - 1)."""
    dcg = sum((2 ** grades.get(key, 0) - 1) / math.log2(i + 2) for i, key in enumerate(ranked))
    ideal = sorted(grades.values(), reverse=True)[: len(ranked)]
    best = sum((2**grade - 1) / math.log2(i + 2) for i, grade in enumerate(ideal))
    return dcg / best if best else 0.0


class EmbedderUnavailable(Exception):
    """The project's embedder failed during an evaluation, so its figures would be wrong."""


def question_vectors(loaded: Loaded, questions: list[dict]) -> dict:
    """Return each question's vector under the project's serving index (None: no index)."""
    vectors = {}
    for question in questions:
        shift = loaded.shifts.get(question["conversation"], timedelta(0))
        embedded = query_embed(project_id=loaded.project.id, query=question_text(question, shift))
        if embedded.failed:
            # Search would fall back to words alone; figures labelled "vector" would mislead.
            raise EmbedderUnavailable(
                f"the embedder could not embed question {question['id']}; see the server log"
            )
        vectors[question["id"]] = embedded.vector
    return vectors


def evaluate(
    loaded: Loaded, questions: list[dict], modes: list[Mode], progress=None, vectors=None
) -> list:
    """Return each question's metrics and top results under every mode.

    vectors (from question_vectors) saves embedding the questions again on repeated calls.
    """
    if vectors is None:
        vectors = question_vectors(loaded, questions)
    rows = []
    for number, question in enumerate(questions, start=1):
        vector = vectors[question["id"]]
        grades = grades_of(question)
        row = {"id": question["id"], "type": question["type"], "modes": {}}
        for mode in modes:
            ranked = ranked_keys(loaded, question, mode, vector)
            row["modes"][mode.label] = {**score(ranked, grades), "top": ranked[:3]}
        rows.append(row)
        if progress is not None:
            progress(number, len(questions))
    return rows


def aggregate(rows: list[dict], modes: list[Mode]) -> dict:
    """Return mean metrics by question type (and "all") for every mode; types asked only."""
    table: dict = {}
    for kind in TYPES_ORDER:
        chosen = [row for row in rows if kind in ("all", row["type"])]
        if not chosen:
            continue
        table[kind] = {"n": len(chosen)}
        for mode in modes:
            table[kind][mode.label] = {
                metric: sum(row["modes"][mode.label][metric] for row in chosen) / len(chosen)
                for metric in METRICS
            }
    return table
