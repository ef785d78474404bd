"""Full-text scores: weighed by how common a word is in the scope, never in other tenants' data."""

import pytest
from django.db import connection

from apps.search.backends import backend
from apps.search.backends.common import Span, bm25_scores, matches_per_term
from apps.search.models import SearchItem
from apps.search.scope import Scope
from tests.races import before_statement


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


def test_both_backends_score_by_bm25_over_the_scopes_own_items(alice):
    # The same texts score the same on SQLite and PostgreSQL: BM25 over the thread's item count,
    # each word's matches in it and the texts' lengths (PostgreSQL weighed a word by how often
    # it occurred among the candidates, whatever the scope held).
    thread = alice.new_thread()
    texts = ["the crane invoice", "a crane", "the harbour", "the harbour tour", "invoice paid"]
    alice.append(thread["id"], *[{"role": "user", "content": text} for text in texts])
    items = list(SearchItem.objects.filter(thread_id=thread["id"]).order_by("-id"))
    terms = ["crane", "invoice"]
    matched = [
        [(item.id, len(item.content)) for item in items if term in item.content] for term in terms
    ]
    span = Span(items[-1].id, items[0].id, len(items))

    found = backend().lexical_candidates(messages_scope(alice, thread["id"]), terms, limit=10)

    expected = bm25_scores(matched, span, matches_per_term(10, len(terms)))
    assert {c.item_id: c.score for c in found} == pytest.approx(expected)
    assert len(found) == 3


def test_a_short_message_with_the_word_ranks_above_a_newer_long_one(alice):
    thread = alice.new_thread()
    padding = " ".join(f"word{n}" for n in range(60))
    alice.append(
        thread["id"],
        {"role": "user", "content": "the crane"},
        {"role": "user", "content": f"the crane {padding}"},
    )

    found = backend().lexical_candidates(messages_scope(alice, thread["id"]), ["crane"], limit=10)

    short, long = sorted(found, key=lambda c: c.item_id)
    assert short.score > long.score > 0
    assert found[0] == short


@pytest.mark.skipif(
    connection.vendor != "postgresql", reason="SQLite reads matches within the ids it spanned"
)
def test_a_match_written_after_the_scope_was_spanned_is_scored_not_a_500(alice):
    # PostgreSQL reads the scope's lowest and highest ids, then its matches, in statements of
    # their own: a message appended in between is among the matches but past the span read.
    thread = alice.new_thread()
    alice.append(thread["id"], {"role": "user", "content": "the crane"})
    scope = messages_scope(alice, thread["id"])

    def append_meanwhile():
        alice.append(thread["id"], {"role": "user", "content": "the crane again"})

    with before_statement("FROM search_searchitem c WHERE c.tsv @@", append_meanwhile):
        found = backend().lexical_candidates(scope, ["crane"], limit=1)

    newest = SearchItem.objects.filter(thread_id=thread["id"]).order_by("-id").first()
    assert [c.item_id for c in found] == [newest.id]
    assert found[0].score > 0


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
