"""Reciprocal rank fusion with a recency bonus, on plain lists (no database)."""

from datetime import UTC, datetime, timedelta

import pytest

from apps.search.fusion import FusionWeights, fuse

NOW = datetime(2026, 1, 31, 12, 0, tzinfo=UTC)
NO_RECENCY = FusionWeights(lexical=0.5, vector=1.0, recency=0.0, half_life_days=30, k=5)


def _created(*item_ids, age=timedelta(0)):
    return dict.fromkeys(item_ids, NOW - age)


def _scores(fused):
    return {entry.item_id: entry.score for entry in fused}


def test_each_signal_adds_its_weight_over_k_plus_rank():
    ranked = {"lexical": [(1, 9.0), (2, 4.0)], "vector": [(2, 0.9), (3, 0.5)]}

    fused = fuse(ranked, _created(1, 2, 3), NOW, NO_RECENCY)

    assert _scores(fused) == pytest.approx({1: 0.5 / 6, 2: 0.5 / 7 + 1.0 / 6, 3: 1.0 / 7})
    assert [entry.item_id for entry in fused] == [2, 3, 1]


def test_the_same_rank_counts_more_in_a_heavier_signal():
    fused = fuse({"lexical": [(1, 1.0)], "vector": [(2, 1.0)]}, _created(1, 2), NOW, NO_RECENCY)

    assert [entry.item_id for entry in fused] == [2, 1]


@pytest.mark.parametrize(
    "age_days, half_life, freshness",
    [
        (0, 30, 1.0),
        (30, 30, 0.5),
        (60, 30, 0.25),
        (7, 7, 0.5),
        (-3, 30, 1.0),  # stored with a clock ahead of ours: counted as new, never above 1
        (10, 0, 0.0),  # half-life 0 turns the bonus off
    ],
)
def test_the_recency_bonus_halves_every_half_life(age_days, half_life, freshness):
    weights = FusionWeights(recency=0.2, half_life_days=half_life, k=5)

    [entry] = fuse({"lexical": [(1, 3.0)]}, _created(1, age=timedelta(days=age_days)), NOW, weights)

    assert entry.score == pytest.approx(0.5 / 6 + 0.2 * freshness / 6)
    assert entry.signals["recency"]["score"] == pytest.approx(freshness)
    assert entry.signals["recency"]["age_days"] == pytest.approx(max(0, age_days))


def test_recency_breaks_a_tie_of_ranks_toward_the_newer_item():
    weights = FusionWeights(lexical=1.0, vector=1.0, recency=0.05, half_life_days=30, k=5)
    # Each item is first in one signal of equal weight, so only their ages differ; the newer
    # one has the lower id, so the id tie-break alone would have put it second.
    created = {1: NOW - timedelta(days=1), 2: NOW - timedelta(days=90)}

    fused = fuse({"lexical": [(1, 2.0)], "vector": [(2, 0.8)]}, created, NOW, weights)

    assert [entry.item_id for entry in fused] == [1, 2]
    assert fused[0].score > fused[1].score


def test_equal_scores_put_the_higher_item_id_first():
    ranked = {"lexical": [(4, 1.0)], "vector": [(9, 1.0)]}
    even = FusionWeights(lexical=1.0, vector=1.0, recency=0.0, k=5)

    fused = fuse(ranked, _created(4, 9), NOW, even)

    assert fused[0].score == fused[1].score
    assert [entry.item_id for entry in fused] == [9, 4]


def test_each_result_carries_the_rank_and_raw_score_of_every_signal_that_found_it():
    ranked = {"lexical": [(1, 7.123456789), (2, 3.0)], "vector": [(2, 0.87654321)]}

    by_id = {e.item_id: e for e in fuse(ranked, _created(1, 2), NOW, NO_RECENCY)}

    assert by_id[1].signals["lexical"] == {"rank": 1, "score": 7.123457}
    assert "vector" not in by_id[1].signals
    assert by_id[2].signals["lexical"] == {"rank": 2, "score": 3.0}
    assert by_id[2].signals["vector"] == {"rank": 1, "score": 0.876543}
    assert set(by_id[2].signals) == {"lexical", "vector", "recency"}


def test_an_item_deleted_since_it_was_found_is_left_out():
    ranked = {"lexical": [(1, 2.0), (2, 1.0)]}

    fused = fuse(ranked, _created(2), NOW, NO_RECENCY)

    assert [entry.item_id for entry in fused] == [2]
    assert fused[0].signals["lexical"]["rank"] == 2  # ranks are those of the lists as found


def test_no_candidates_fuse_to_nothing():
    assert fuse({"lexical": [], "vector": []}, {}, NOW, FusionWeights()) == []
