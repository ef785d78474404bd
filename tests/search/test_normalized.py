"""Fusion by per-query normalised scores, on plain lists and through search() on the database."""

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from apps.search.fusion import FusionWeights, fuse
from apps.search.normalized import fuse_normalized
from apps.search.scope import Scope
from apps.search.selectors import default_weights, query_vector, search

NOW = datetime(2026, 1, 31, 12, 0, tzinfo=UTC)
EVEN = FusionWeights(recency=0.0, k=5, normalized_lexical=1.0, normalized_vector=1.0)


def _created(*item_ids, age=timedelta(0)):
    return dict.fromkeys(item_ids, NOW - age)


def test_scores_follow_the_formula_where_rank_fusion_would_order_otherwise():
    # Item 1 holds far more of the words and is nearly as similar as item 2.
    ranked = {"lexical": [(1, 9.0), (2, 0.5)], "vector": [(2, 0.60), (1, 0.59), (3, 0.20)]}

    fused = fuse_normalized(ranked, _created(1, 2, 3), NOW, EVEN)

    # lexical: raw / 9 (an item without the words scores 0); vector: (raw − 0.2) / (0.6 − 0.2)
    expected = {1: (1.0 + 0.975) / 6, 2: (0.5 / 9 + 1.0) / 6, 3: 0.0}
    assert {e.item_id: e.score for e in fused} == pytest.approx(expected)
    assert [e.item_id for e in fused] == [1, 2, 3]
    by_rank = fuse(ranked, _created(1, 2, 3), NOW, replace(EVEN, lexical=0.5, vector=1.0))
    assert [e.item_id for e in by_rank] == [2, 1, 3]


def test_each_signal_keeps_its_rank_and_raw_score_beside_the_normalised_one():
    ranked = {"lexical": [(1, 4.0), (2, 1.0)], "vector": [(2, 0.8)]}

    by_id = {e.item_id: e for e in fuse_normalized(ranked, _created(1, 2), NOW, EVEN)}

    assert by_id[1].signals["lexical"] == {"rank": 1, "score": 4.0, "normalized": 1.0}
    assert by_id[2].signals["lexical"] == {"rank": 2, "score": 1.0, "normalized": 0.25}
    # A list of one: the best is its own floor, and the item counts as the best.
    assert by_id[2].signals["vector"] == {"rank": 1, "score": 0.8, "normalized": 1.0}
    assert by_id[1].score == pytest.approx(1.0 / 6)  # not found by vectors: 0 there
    assert by_id[2].score == pytest.approx(1.25 / 6)


def test_the_weights_and_the_recency_bonus_apply_on_the_rank_fusion_scale():
    weights = replace(EVEN, normalized_lexical=0.4, normalized_vector=2.0, recency=0.3)
    created = {1: NOW, 2: NOW - timedelta(days=30)}  # one half-life old

    fused = fuse_normalized({"lexical": [(1, 2.0)], "vector": [(2, 0.5)]}, created, NOW, weights)

    scores = {e.item_id: e.score for e in fused}
    assert scores == pytest.approx({1: (0.4 + 0.3) / 6, 2: (2.0 + 0.3 * 0.5) / 6})


def test_no_candidates_fuse_to_nothing():
    assert fuse_normalized({"lexical": [], "vector": []}, {}, NOW, EVEN) == []


TEXTS = [
    "the espresso machine is leaking water on the espresso bar",
    "the espresso machine needs new water filters",
    "water the plants on friday",
    "quarterly revenue grew in the northern region",
]


@pytest.mark.parametrize("with_vectors", [False, True])
def test_search_fuses_the_listed_kinds_by_the_formula(alice, use_embedder, with_vectors):
    thread = alice.new_thread()
    alice.append(thread["id"], *({"role": "user", "content": text} for text in TEXTS))
    if with_vectors:
        use_embedder(alice)()
    weights = replace(
        default_weights(),
        normalized_kinds=frozenset({"message"}),
        normalized_lexical=0.7,
        normalized_vector=1.3,
        neighbour_share=0.0,
        session_share=0.0,
    )
    scope = Scope(kind="message", project_id=alice.agent.project_id, agent_id=alice.agent.id)
    query = "espresso water"
    vector = query_vector(project_id=alice.agent.project_id, query=query)
    assert (vector is not None) == with_vectors

    hits = search(scopes=[scope], query=query, top_k=10, vector=vector, weights=weights)

    assert len(hits) >= 3
    for hit in hits:
        signals = hit.signals
        expected = sum(
            weight * signals[name]["normalized"]
            for name, weight in (("lexical", 0.7), ("vector", 1.3))
            if name in signals
        )
        expected += weights.recency * signals["recency"]["score"]
        assert hit.score == pytest.approx(expected / (weights.k + 1), abs=2e-6)
    lexical = [hit.signals["lexical"] for hit in hits if "lexical" in hit.signals]
    assert max(found["normalized"] for found in lexical) == 1.0
    assert all(
        found["normalized"]
        == pytest.approx(found["score"] / max(other["score"] for other in lexical), abs=2e-6)
        for found in lexical
    )
    assert [hit.score for hit in hits] == sorted((hit.score for hit in hits), reverse=True)
    assert hits[0].item.message.content in TEXTS[:2]  # both words
