"""bench/fusion_by_kind.py: a quick run on SQLite over a tiny set, and its sign test.

The run is the script itself in a subprocess (its own SQLite installation in a temporary data
directory, the local ONNX model), on a set written here: two conversations whose turns become
chunks and entries, with a filler turn repeated so that entries share one (hash dedupe).
"""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import fusion_by_kind  # noqa: E402


def session(key: str, day: str, said: str, reply: str) -> dict:
    turns = [
        ("user", said, "09:00:00"),
        ("assistant", reply, "09:00:20"),
        ("user", "Thanks, that helps.", "09:03:00"),
        ("assistant", "You're welcome.", "09:03:10"),
    ]
    return {
        "id": key,
        "turns": [
            {"role": role, "content": content, "created_at": f"{day}T{at}+00:00"}
            for role, content, at in turns
        ],
    }


def tiny_set() -> dict:
    facts = {
        "c1": [
            ("Which carrier should ship the pallets?", "Kuehne and Nagel ships the pallets."),
            ("What is the offsite budget?", "The offsite budget is 4000 euros."),
        ],
        "c2": [
            ("Which database for the reports?", "The reports run on plain psycopg."),
            ("When does the deploy freeze start?", "The deploy freeze starts on Friday."),
        ],
    }
    conversations, questions = [], []
    for key, pairs in facts.items():
        sessions = [
            session(f"{key}-s{n}", f"2025-0{n}-1{n}", said, reply)
            for n, (said, reply) in enumerate(pairs, start=1)
        ]
        conversations.append(
            {"id": key, "user": key, "resource": f"user-{key}", "thread": "single"}
            | {"sessions": sessions}
        )
        for number, (said, _) in enumerate(pairs, start=1):
            questions.append(
                {
                    "id": f"{key}-q{number}",
                    "conversation": key,
                    "type": "exact",
                    "question": said,
                    "relevant": [
                        {"session": f"{key}-s{number}", "turn": 1, "grade": 2},
                        {"session": f"{key}-s{number}", "turn": 0, "grade": 1},
                    ],
                }
            )
    return {"conversations": conversations, "questions": questions}


def test_a_quick_run_gives_each_kind_both_fusions_and_a_verdict(tmp_path):
    path, out = tmp_path / "tiny.json", tmp_path / "out.json"
    path.write_text(json.dumps(tiny_set()))
    command = [sys.executable, str(ROOT / "bench" / "fusion_by_kind.py"), "--quick"]
    command += ["--set", str(path), "--backend", "sqlite", "--json", str(out)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)

    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(out.read_text())
    assert set(result["kinds"]) == {"chunk", "entry"}
    for kind, found in result["kinds"].items():
        table = found["table"]
        assert {"lexical", "vector", "rank fusion", "rank (CV)", "normalised (CV)"} <= set(table)
        assert any(label.startswith("normalised 1:2") for label in table)
        # Each question's answer holds its words: full text alone ranks it in the top 10.
        assert table["lexical"]["R@10"] == 1.0
        for tuning in found["tuning"].values():
            assert [fold["held_out"] for fold in tuning["folds"]] == ["c1", "c2"]
        assert found["verdict"] in ("switch", "keep rank fusion")
        assert f"[sqlite] {kind}: rank fusion " in done.stdout
    assert "→" in result["verdicts"][0]


def test_the_sign_test_is_two_sided_and_one_without_differences():
    assert fusion_by_kind.sign_test(0, 0) == 1.0
    assert fusion_by_kind.sign_test(5, 5) == 1.0
    assert abs(fusion_by_kind.sign_test(10, 0) - 2 / 2**10) < 1e-12
    assert fusion_by_kind.sign_test(2, 8) == fusion_by_kind.sign_test(8, 2)
