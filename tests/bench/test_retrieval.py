"""The retrieval benchmark: its multi-session set, its cross-validated tuning, and a quick run.

The set and the tuner are checked in-process (bench/ on sys.path, as the scripts run); the run
is bench/retrieval.py itself, in a subprocess on the suite's backend, on a tiny set written here
with the fake OpenAI embedder, so it checks the whole chain in well under a minute.
"""

import json
import os
import subprocess
import sys
from dataclasses import dataclass, fields
from pathlib import Path
from urllib.parse import urlparse

import pytest

from apps.search.fusion import FusionWeights

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import multisession_data  # noqa: E402
import retrieval_tuning  # noqa: E402


def test_the_committed_multisession_set_is_what_its_seed_builds():
    built = multisession_data.build_set()

    committed = json.loads(multisession_data.SET_PATH.read_text())
    assert built == committed


def test_the_multisession_set_has_long_conversations_and_every_question_type():
    data = json.loads(multisession_data.SET_PATH.read_text())
    sessions = {s["id"]: s for c in data["conversations"] for s in c["sessions"]}

    assert len(data["conversations"]) >= 10
    for conversation in data["conversations"]:
        assert sum(len(s["turns"]) for s in conversation["sessions"]) >= 300
        assert conversation["thread"] == "single"
    kinds = {q["type"] for q in data["questions"]}
    assert {"exact", "paraphrase", "adjacent", "session", "multi_hop", "temporal"} <= kinds
    for question in data["questions"]:
        answers = [r for r in question["relevant"] if r["grade"] == 2]
        assert answers and all(r["turn"] < len(sessions[r["session"]]["turns"]) for r in answers)
        if question["type"] == "multi_hop":
            assert len({r["session"] for r in answers}) >= 2
    assert any(t.get("name") == "Priya" for s in sessions.values() for t in s["turns"])
    assert any(s["run"] for s in sessions.values())


@dataclass(frozen=True)
class LaterWeights(FusionWeights):
    """FusionWeights as it will be once conversation ranking adds its fields."""

    neighbour_share: float = 0.1
    unknown_knob: float = 1.0


def test_the_grid_tunes_the_fields_that_exist_defaults_first():
    today = retrieval_tuning.tuned_grid(FusionWeights(), ("lexical",))
    later = retrieval_tuning.tuned_grid(LaterWeights(), ("lexical", "vector"))

    assert set(today) <= {spec.name for spec in fields(FusionWeights)}
    assert "lexical" in today and "vector" not in today  # vector's weight needs vectors
    assert "neighbour_share" in later and "vector" in later
    assert "unknown_knob" not in later
    assert later["neighbour_share"][0] == 0.1  # the default leads
    assert retrieval_tuning.tuned_grid(FusionWeights(), ("lexical",), quick=True)["k"] == [5, 20]


def test_each_fold_chooses_on_the_other_conversations_and_is_scored_on_its_own():
    # Conversations a and b do best with k=20, c with k=60; every point is searched once.
    best = {"a": 20, "b": 20, "c": 60}
    conversations = {f"{c}{n}": c for c in best for n in range(2)}
    searched = []

    def evaluate_point(values):
        searched.append(values)
        return {
            q: {"R@10": 1.0 if values["k"] == best[c] else 0.0, "nDCG@10": 0.5}
            for q, c in conversations.items()
        }

    tuner = retrieval_tuning.Tuner(evaluate_point, {"k": [5, 20, 60]}, conversations)
    found = tuner.cross_validate()

    chosen = {fold["held_out"]: fold["values"]["k"] for fold in found["folds"]}
    assert chosen == {"a": 20, "b": 20, "c": 20}
    assert {q: row["R@10"] for q, row in found["held_out_rows"].items()} == {
        "a0": 1.0,
        "a1": 1.0,
        "b0": 1.0,
        "b1": 1.0,
        "c0": 0.0,
        "c1": 0.0,
    }
    assert dict(found["in_sample"]) == {"k": 20}
    assert found["most_chosen"] == {"k": 20}
    assert len(searched) == found["points_searched"] == 3


def test_a_tie_keeps_the_default():
    conversations = {"a0": "a", "b0": "b"}
    flat = retrieval_tuning.Tuner(
        lambda values: {q: {"R@10": 0.5, "nDCG@10": 0.5} for q in conversations},
        {"lexical": [0.5, 1.0], "k": [5, 60]},
        conversations,
    )

    assert flat.cross_validate()["most_chosen"] == {"lexical": 0.5, "k": 5}


def turn(role, content, at, name=""):
    return {"role": role, "content": content, "created_at": at} | ({"name": name} if name else {})


def tiny_conversation(key: str, resource: str, facts: list[tuple[str, str]]) -> dict:
    sessions = []
    for number, (said, reply) in enumerate(facts, start=1):
        day = f"2025-0{number}-1{number}"
        sessions.append(
            {
                "id": f"{key}-s{number}",
                "run": number == 1,
                "turns": [
                    turn("user", said, f"{day}T09:00:00+00:00", name="Maria"),
                    turn("assistant", reply, f"{day}T09:00:20+00:00"),
                    turn("user", "Thanks, that helps.", f"{day}T09:03:00+00:00", name="Tom"),
                    turn("assistant", "You're welcome.", f"{day}T09:03:10+00:00"),
                ],
            }
        )
    return {"id": key, "user": "Maria", "resource": resource, "thread": "single"} | {
        "sessions": sessions
    }


def tiny_set() -> dict:
    conversations = [
        tiny_conversation(
            "c1",
            "maria",
            [
                ("Which carrier should ship the pallets?", "Kuehne and Nagel, it is cheaper."),
                ("The budget for the offsite is 4000 euros.", "Noted, 4000 euros."),
            ],
        ),
        tiny_conversation(
            "c2",
            "tom",
            [
                ("Which database for the reports?", "Plain psycopg with SQL files."),
                ("The deploy freeze starts on Friday.", "Noted, no deploys on Friday."),
            ],
        ),
    ]
    questions = []
    for conversation in conversations:
        first, second = conversation["sessions"]
        questions += [
            {
                "conversation": conversation["id"],
                "type": "adjacent",
                "question": first["turns"][0]["content"],
                "relevant": [
                    {"session": first["id"], "turn": 1, "grade": 2},
                    {"session": first["id"], "turn": 0, "grade": 1},
                ],
            },
            {
                "conversation": conversation["id"],
                "type": "temporal",
                "question": "What did we note in February 2025?",
                "template": "What did we note in {month} {year}?",
                "anchor": second["turns"][1]["created_at"],
                "relevant": [{"session": second["id"], "turn": 1, "grade": 2}],
            },
        ]
    questions = [{"id": f"t{n}", **q} for n, q in enumerate(questions, start=1)]
    return {"conversations": conversations, "questions": questions}


@pytest.fixture
def backend() -> str:
    return "postgres" if os.environ.get("DATABASE_URL", "").startswith("postgres") else "sqlite"


def test_a_quick_run_reports_cross_validated_tuning_per_question_type(tmp_path, backend):
    path, out = tmp_path / "tiny.json", tmp_path / "out.json"
    path.write_text(json.dumps(tiny_set()))
    name = urlparse(os.environ.get("DATABASE_URL", "")).path.strip("/") or "memory_console"
    command = [sys.executable, str(ROOT / "bench" / "retrieval.py"), "--quick"]
    command += ["--set", str(path), "--backend", backend, "--json", str(out)]
    command += ["--embedders", "fake-openai-http", "--pg-database", f"{name}_retrieval_smoke"]
    env = {**os.environ, "DATA_DIR": str(tmp_path / "data")}
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)

    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(out.read_text())
    lexical = result["lexical_tuning"]
    fused = result["embedders"]["fake-openai-http"]["tuning"]
    weight_fields = {spec.name for spec in fields(FusionWeights)}
    for tuning in (lexical, fused):
        assert tuning["select_by"] == "R@10"
        assert set(tuning["tables"]) == {"default", "cross-validated", "in-sample best"}
        for table in tuning["tables"].values():
            assert set(table) == {"adjacent", "temporal", "all"}
            assert table["all"]["n"] == 4
            assert {"R@5", "R@10", "MRR", "nDCG@10"} <= set(table["all"])
        assert [fold["held_out"] for fold in tuning["folds"]] == ["c1", "c2"]
        assert set(tuning["most_chosen"]) == set(tuning["grid"]) <= weight_fields
        assert tuning["points_searched"] >= 1
    assert "vector" in fused["grid"] and "vector" not in lexical["grid"]
    assert "cross-validated" in done.stdout and "most often chosen" in done.stdout
