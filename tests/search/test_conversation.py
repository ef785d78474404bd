"""Conversation-aware ranking: messages share their scores with their neighbours and sessions,
never across a thread or a session's pause; a neighbour nothing matched can be returned."""

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.memconfig.services import config_update
from tests.search.hits import matched

START = timezone.now() - timedelta(days=2)


@pytest.fixture(autouse=True, params=[[], ["message"]], ids=["rank-fused", "score-fused"])
def fusion(request, settings):
    """Run each test with messages fused by rank and by normalised scores."""
    settings.SEARCH_NORMALIZED_KINDS = request.param


def _search(actor, **body):
    body = {"scopes": ["messages"], "top_k": 10, **body}
    response = actor.post("/api/v1/search", body)
    assert response.status_code == 200, response.content
    return response.json()["results"]


def _say(actor, thread_id, *turns, run_id=None):
    """Append (minutes after START, text) turns to the thread."""
    actor.append(
        thread_id,
        *(
            {
                "role": "user",
                "content": text,
                "created_at": (START + timedelta(minutes=minutes)).isoformat(),
                "run_id": run_id,
            }
            for minutes, text in turns
        ),
    )


def _configure(actor, **values):
    changes = {f"search_context_{key}": value for key, value in values.items() if key != "gap"}
    if "gap" in values:
        changes["search_session_gap_minutes"] = values["gap"]
    config_update(agent=actor.agent, changes=changes, changed_by="test")


def _own_score(hit) -> float:
    """The hit's score before its conversation gains."""
    context = hit["signals"].get("context", {})
    return hit["score"] - context.get("neighbour", 0) - context.get("session", 0)


@pytest.fixture
def harbour(alice):
    """One thread whose session breaks after seq 4, and a second thread at the same times."""
    first = alice.new_thread()
    _say(
        alice,
        first["id"],
        (0, "pelican harbour"),  # 1: the best match
        (5, "harbour"),  # 2: its neighbour
        (10, "lunch menu"),  # 3: matches nothing
        (15, "harbour"),  # 4: same session as 1, not beside it
        (195, "harbour"),  # 5: three hours later, a new session
    )
    second = alice.new_thread()
    _say(alice, second["id"], (1, "harbour"))
    return first["id"], second["id"]


def _by_place(results):
    return {(hit["thread_id"], hit["seq"]): hit for hit in results}


def test_a_message_gains_from_its_neighbour_and_its_session_and_says_whence(alice, harbour):
    first, second = harbour
    _configure(alice, neighbour_share=0.2, session_share=0.1, gap=30)

    hits = _by_place(_search(alice, query="pelican harbour"))

    best = hits[(first, 1)]
    assert hits[(first, 2)]["signals"]["context"] == {
        "neighbour": pytest.approx(0.2 * _own_score(best), abs=2e-6),
        # A thousandth less per message between them: one.
        "session": pytest.approx(0.1 * _own_score(best) * 0.999, abs=2e-6),
        "from": {"neighbour": 1, "session": 1},
    }
    # Seq 4 is in seq 1's session, but its neighbours are 3 (no score) and 5 (another session).
    assert hits[(first, 4)]["signals"]["context"] == {
        "session": pytest.approx(0.1 * _own_score(best) * 0.997, abs=2e-6),
        "from": {"session": 1},
    }
    assert best["signals"]["context"]["from"]["neighbour"] == 2
    assert list(hits)[0] == (first, 1)


def test_nothing_crosses_a_pause_or_a_thread(alice, harbour):
    first, second = harbour
    _configure(alice, neighbour_share=0.2, session_share=0.1, gap=30)

    hits = _by_place(_search(alice, query="pelican harbour"))

    assert "context" not in hits[(first, 5)]["signals"]  # three hours after seq 4
    assert "context" not in hits[(second, 1)]["signals"]  # a minute after seq 1, elsewhere
    for hit in hits.values():
        assert hit["signals"].get("context", {}).get("from", {}).get("session") != 5


def test_a_longer_gap_setting_joins_the_later_messages_to_the_session(alice, harbour):
    first, second = harbour
    _configure(alice, neighbour_share=0.2, session_share=0.1, gap=240)

    hits = _by_place(_search(alice, query="pelican harbour"))

    assert hits[(first, 5)]["signals"]["context"]["from"] == {"neighbour": 4, "session": 1}
    assert "context" not in hits[(second, 1)]["signals"]


def test_a_run_is_one_session_whatever_its_pauses(alice):
    thread = alice.new_thread()
    run = alice.post(f"/api/v1/threads/{thread['id']}/runs", {"name": "long task"}).json()
    _say(alice, thread["id"], (0, "pelican harbour"), (600, "harbour"), run_id=run["id"])
    other = alice.new_thread()
    _say(alice, other["id"], (0, "pelican harbour"), (600, "harbour"))
    _configure(alice, neighbour_share=0.2, session_share=0.1, gap=30)

    hits = _by_place(_search(alice, query="pelican harbour"))

    assert hits[(thread["id"], 2)]["signals"]["context"]["from"] == {"neighbour": 1, "session": 1}
    assert "context" not in hits[(other["id"], 2)]["signals"]  # no run: ten hours apart


def _ferry(actor):
    """A question, its answer (which holds none of its words) and three weaker matches."""
    thread = actor.new_thread()
    _say(
        actor,
        thread["id"],
        (0, "what is the ferry timetable"),
        (1, "gate nine, every hour"),
        *((1440 * day, f"a timetable for day {day}") for day in (1, 2, 3)),
    )
    return thread


def test_a_neighbour_nothing_matched_is_returned_when_the_share_is_high_enough(alice):
    thread = _ferry(alice)
    _configure(alice, neighbour_share=0.0, session_share=0.0)
    without = _search(
        alice, query="ferry timetable", top_k=3, message_range={"before": 0, "after": 0}
    )
    _configure(alice, neighbour_share=0.95)

    found = _search(
        alice, query="ferry timetable", top_k=3, message_range={"before": 0, "after": 0}
    )

    assert [hit["seq"] for hit in without][0] == 1
    assert 2 not in [hit["seq"] for hit in without]
    assert [hit["seq"] for hit in found][:2] == [1, 2]
    answer = found[1]
    assert answer["thread_id"] == thread["id"]
    assert answer["content"] == "gate nine, every hour"
    assert set(answer["signals"]) == {"context"}  # neither words nor vectors found it
    assert answer["signals"]["context"]["from"] == {"neighbour": 1}
    assert answer["score"] == pytest.approx(0.95 * found[0]["score"], abs=2e-6)
    assert len(found) == len(without) == 3


def test_the_turns_a_match_lifts_fill_the_answer_up_to_top_k_after_it(alice):
    thread = alice.new_thread()
    _say(alice, thread["id"], (0, "one"), (1, "needle"), (2, "three"), (3, "four"))
    _configure(alice, neighbour_share=0.9, session_share=0.0)

    found = _search(alice, query="needle", message_range={"before": 0, "after": 0})
    one = _search(alice, query="needle", top_k=1)

    # The match first, then the neighbours it lifted; "four" is no neighbour and gained nothing.
    assert [hit["seq"] for hit in found] == [2, 3, 1]
    assert [set(hit["signals"]) for hit in found] == [
        {"lexical", "recency"},
        {"context"},
        {"context"},
    ]
    assert [hit["seq"] for hit in one] == [2]  # never more than top_k


def test_a_lifted_turn_takes_the_place_of_a_weaker_match_once_the_answer_is_full(alice):
    thread = alice.new_thread()
    _say(
        alice,
        thread["id"],
        (0, "needle in the haystack"),
        (1, "the answer after it"),
        *((1440 * day, f"haystack {day}") for day in (1, 2, 3)),
    )
    _configure(alice, neighbour_share=0.9, session_share=0.0)

    found = _search(alice, query="needle haystack", top_k=3)

    assert [hit["seq"] for hit in found][:2] == [1, 2]
    assert len(found) == 3  # one of the weaker matches gave way


def test_vector_search_shares_too_and_keeps_the_floor(alice, use_embedder):
    thread = alice.new_thread()
    _say(alice, thread["id"], (0, "pelican harbour"), (1, "harbour"), (2, "lunch menu"))
    use_embedder(alice)()
    _configure(alice, neighbour_share=0.5, session_share=0.0)

    found = _by_place(_search(alice, query="pelican harbour", min_similarity=0.0))

    assert found[(thread["id"], 2)]["signals"]["context"]["from"] == {"neighbour": 1}
    assert "vector" in found[(thread["id"], 2)]["signals"]
    kept = _search(alice, query="pelican harbour", min_similarity=0.999)
    assert all("lexical" in hit["signals"] for hit in matched(kept))


def _tiles(actor):
    """A session where the question's words come up at seq 1 and its answer, which holds none
    of them, three turns later; a pause; then weaker matches on later days."""
    thread = actor.new_thread()
    _say(
        actor,
        thread["id"],
        (0, "Kofi is choosing the bathroom tiles this week"),
        (1, "about the plumber, part one"),
        (2, "and the plumber again, part two"),
        (3, "he went for the green Moroccan zellige in the end"),
        (70, "lunch break"),
        *((1440 * day, f"bathroom budget check {day}") for day in range(1, 7)),
    )
    return thread


@pytest.mark.parametrize("follow", [1, 12])
def test_the_best_matches_session_is_read_onwards_as_far_as_the_setting_says(
    alice, settings, follow
):
    settings.SEARCH_SESSION_FOLLOW = follow
    thread = _tiles(alice)
    _configure(alice, neighbour_share=0.0, session_share=0.75)

    found = _search(alice, query="Kofi bathroom tiles", message_range={"before": 0, "after": 0})

    seqs = [hit["seq"] for hit in found]
    assert seqs[0] == 1
    if follow == 1:  # only the neighbours are read: the answer three turns on is not
        assert 4 not in seqs
    else:
        answer = next(hit for hit in found if hit["seq"] == 4)
        assert answer["content"] == "he went for the green Moroccan zellige in the end"
        assert answer["signals"] == {
            "context": {
                "session": pytest.approx(0.75 * _own_score(found[0]) * 0.997, abs=2e-6),
                "from": {"session": 1},
            }
        }
        # Of the turns the session lifts alike, the nearer come first.
        lifted = [seq for seq in seqs if 2 <= seq <= 4]
        assert lifted == sorted(lifted)
        assert thread["id"] == answer["thread_id"]


def test_a_message_that_enters_by_its_share_gets_the_boost_of_the_period_the_query_names(alice):
    thread = alice.new_thread()
    noon = START.replace(hour=12, minute=0, second=0, microsecond=0)
    alice.append(
        thread["id"],
        *(
            {"role": "user", "content": text, "created_at": (noon + at).isoformat()}
            for at, text in (
                (timedelta(days=-3), "the training block we planned"),
                (timedelta(0), "time to plan the next training block"),
                (timedelta(minutes=1), "weeks five to eight: 55, 60, 65 km"),
                (timedelta(days=1), "lunch break"),  # the newest: its day before is "yesterday"
            )
        ),
    )
    _configure(alice, neighbour_share=0.5, session_share=0.0)

    found = _search(
        alice,
        query="What did the training block we planned yesterday add?",
        message_range={"before": 0, "after": 0},
    )

    # The reply to yesterday's match, which holds none of the words, comes before the match of
    # three days earlier: it is of the period the question names, as its neighbour is.
    assert {hit["seq"] for hit in found[:2]} == {2, 3}
    assert found[2]["seq"] == 1 and found[2]["signals"]["time"]["score"] == 0.0
    answer = next(hit for hit in found if hit["seq"] == 3)
    assert set(answer["signals"]) == {"context", "time"}
    assert answer["signals"]["time"]["score"] == 1.0
    boost = 0.08  # FusionWeights.temporal_boost
    gain = answer["signals"]["context"]["neighbour"]
    assert gain == pytest.approx(0.5 * found[[h["seq"] for h in found].index(2)]["score"], abs=2e-6)
    assert answer["score"] == pytest.approx(gain + boost, abs=2e-6)
