"""Full-text scores: weighed by how common a word is in the scope, never in other tenants' data."""

import pytest

from apps.search.backends import backend
from apps.search.backends.sqlite import Span, bm25_scores
from apps.search.scope import Scope


def messages_scope(actor, thread_id) -> Scope:
    return Scope(
        kind="message",
        project_id=actor.agent.project_id,
        agent_id=actor.agent.id,
        thread_id=thread_id,
    )


def test_a_scopes_scores_do_not_depend_on_other_tenants_text(alice, carol):
    thread = alice.new_thread()
    alice.append(
        thread["id"],
        {"role": "user", "content": "the invoice for the harbour crane"},
        {"role": "assistant", "content": "the crane invoice is paid"},
        {"role": "user", "content": "book the harbour tour"},
    )
    scope = messages_scope(alice, thread["id"])
    before = backend().lexical_candidates(scope, ["harbour", "invoice", "crane"], limit=10)
    # Another project writes the same words many times over: with statistics taken over the
    # whole index, "harbour" would now weigh less in alice's thread, and a score would tell
    # alice how often carol writes it.
    other = carol.new_thread()
    carol.append(other["id"], *[{"role": "user", "content": f"harbour {n}"} for n in range(60)])

    after = backend().lexical_candidates(scope, ["harbour", "invoice", "crane"], limit=10)

    assert after == before
    assert len(before) == 3


def test_other_tenants_rows_between_a_threads_messages_do_not_change_its_scores(alice, carol):
    texts = ["the invoice for the harbour crane", "the crane invoice is paid", "harbour tour"]
    together = alice.new_thread()
    alice.append(together["id"], *[{"role": "user", "content": text} for text in texts])
    apart = alice.new_thread()
    other = carol.new_thread()
    for text in texts:
        alice.append(apart["id"], {"role": "user", "content": text})
        carol.append(other["id"], *[{"role": "user", "content": "harbour crane"}] * 5)
    terms = ["harbour", "invoice", "crane"]

    alone = backend().lexical_candidates(messages_scope(alice, together["id"]), terms, limit=10)
    mixed = backend().lexical_candidates(messages_scope(alice, apart["id"]), terms, limit=10)

    assert [c.score for c in mixed] == pytest.approx([c.score for c in alone])


def test_a_rare_word_outweighs_a_common_one():
    # Items 1..100: "common" in every one of them, "rare" only in item 7; same lengths.
    common = [(item_id, 20) for item_id in range(100, 0, -1)]
    rare = [(7, 20)]

    scores = bm25_scores([common, rare], Span(1, 100, 100), candidates=200)

    assert scores[7] == max(scores.values())
    only_common = scores[8]
    assert scores[7] - only_common > only_common  # the rare word adds more than the common one


def test_a_shorter_text_with_the_same_word_ranks_higher():
    scores = bm25_scores([[(3, 40), (2, 400)]], Span(1, 50, 50), candidates=200)

    assert scores[3] > scores[2] > 0


def test_a_word_with_more_matches_than_read_is_estimated_from_the_span_they_cover():
    # Ten matches read (the cap) in the newest 20 ids of a 1,000-id span: about 500 in all,
    # so the word weighs like one found in half the span, not like one found ten times.
    capped = [[(item_id, 10) for item_id in range(1000, 980, -2)]]
    half = [[(item_id, 10) for item_id in range(1000, 0, -2)]]

    estimated = bm25_scores(capped, Span(1, 1000, 1000), candidates=10)
    counted = bm25_scores(half, Span(1, 1000, 1000), candidates=1000)

    assert estimated[1000] == pytest.approx(counted[1000], rel=0.1)
    ten = bm25_scores(capped, Span(1, 1000, 1000), candidates=200)  # the same ten, all there is
    assert ten[1000] > 2 * estimated[1000]


def test_no_matches_score_nothing():
    assert bm25_scores([[], []], Span(1, 10, 10), candidates=200) == {}
