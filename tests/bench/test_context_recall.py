"""The context benchmark's measures: what counts as present, and leave-one-out selection.

Checked in-process (bench/ on sys.path, as the script runs) on small made-up results, so a
fold's choice can be worked out by hand.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import context_recall  # noqa: E402


class Questions:
    """Evidence's shape: the questions, each of a conversation."""

    def __init__(self, conversations: dict[str, list[str]]):
        self.questions = [
            {"id": qid, "conversation": conversation}
            for conversation, ids in conversations.items()
            for qid in ids
        ]


def test_it_counts_evidence_present_when_an_answer_is_in_the_text_with_escapes_undone():
    answer = {
        "system_prompt": "<recall>\n#4 [2024-01-01 10:00 UTC] user: fish &amp; chips\n</recall>",
        "messages": [{"content": "the van comes at 6"}],
    }
    text = context_recall.context_text(answer)

    assert context_recall.present(["fish & chips"], text)
    assert context_recall.present(["nothing here", "the van comes at 6"], text)
    assert not context_recall.present(["fish and chips"], text)


def test_it_scores_each_conversation_with_the_point_chosen_on_the_others(monkeypatch):
    good, bad = context_recall.GRID[0], context_recall.GRID[1]
    monkeypatch.setattr(context_recall, "GRID", [good, bad])
    monkeypatch.setattr(context_recall, "BUDGETS", (100,))
    evidence = Questions({"a": ["a1", "a2"], "b": ["b1"], "c": ["c1"]})
    # `good` finds everything but a1; `bad` finds only a1. Leaving out a, good wins on b and c
    # (2 of 2 against 0), so a scores good's 1 of 2; leaving out b or c, good wins on the rest
    # (2 of 3 against 1 of 3), so each scores 1 of 1.
    found = {
        good: {"a1": False, "a2": True, "b1": True, "c1": True},
        bad: {"a1": True, "a2": False, "b1": False, "c1": False},
    }
    rows = {
        (point, history): {(qid, 100): hit for qid, hit in found[point].items()}
        for point in (good, bad)
        for history in context_recall.HISTORIES
    }

    cv = context_recall.cross_validate(evidence, rows)

    assert cv["chosen"] == [good, good, good]
    assert cv["most_chosen"] == good
    assert cv["figures"]["observed"][100] == 3 / 4
