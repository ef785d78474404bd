"""What a message is found by: stemmed words, the same stop words on both backends, who said
it and when. Every test runs on SQLite and on PostgreSQL."""

import importlib
import re
from pathlib import Path

import numpy as np
import pytest
from django.db import connection

from apps.providers.embeddings import embedder_for
from apps.search.item_text import said_text
from apps.search.models import ItemEmbedding, SearchItem
from apps.search.query import STOPWORDS, query_terms
from tests.search.hits import matched


def _search(actor, query, **body):
    response = actor.post("/api/v1/search", {"query": query, **body})
    assert response.status_code == 200, response.content
    return response.json()["results"]


def _contents(results):
    return [hit["content"] for hit in results]


def _say(actor, *messages):
    thread = actor.new_thread()
    actor.append(thread["id"], *[{"role": "user", **m} for m in messages])
    return thread


def test_stemming_matches_refunded_to_refund_and_refunds(alice):
    _say(
        alice,
        {"content": "I asked for a refund"},
        {"content": "Refunds take five days"},
        {"content": "the parcel arrived"},
    )

    found = _contents(matched(_search(alice, "was it refunded")))

    assert sorted(found) == ["I asked for a refund", "Refunds take five days"]


def test_a_query_of_stop_words_only_finds_nothing(alice):
    _say(alice, {"content": "what was it about, then?"}, {"content": "the refund"})

    assert _search(alice, "what was it about") == []


def test_stop_words_rank_the_same_on_both_backends(alice):
    # "s", "t" and "don" are stop words of PostgreSQL's english index: a query keeping them
    # matched "it's" and "don't" on SQLite only.
    _say(
        alice,
        {"content": "it's raining, don't go out"},
        {"content": "Maria's refund was sent"},
        {"content": "the refund of the order is late"},
        {"content": "Maria called about her order"},
    )

    found = _contents(matched(_search(alice, "Maria's refund? Don't wait")))

    assert "it's raining, don't go out" not in found
    assert found[0] == "Maria's refund was sent"  # both words, the shortest text
    assert sorted(found[1:]) == ["Maria called about her order", "the refund of the order is late"]


@pytest.mark.skipif("connection.vendor != 'postgresql'")
def test_every_word_postgresql_leaves_out_is_a_query_stop_word(db):
    # The README and the docs pages: a sample of the English the project is written in.
    root = Path(__file__).resolve().parents[2]
    pages = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    text = "\n".join(page.read_text() for page in pages)
    words = {w.lower() for w in re.findall(r"[^\W_]+", text)} | STOPWORDS
    words |= {"don", "s", "t", "could", "would", "shan", "wasn", "ll", "ve", "re", "d", "o"}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT w FROM unnest(%s::text[]) w WHERE to_tsvector('english', w) = ''::tsvector",
            [sorted(words)],
        )
        dropped = {row[0] for row in cursor.fetchall()}

    assert dropped - STOPWORDS == set()
    assert "could" in STOPWORDS - dropped  # dropped from queries only: the same on both


def test_it_finds_a_message_by_its_speaker_and_its_date(alice):
    _say(
        alice,
        {
            "content": "please send the money back",
            "name": "maria",
            "actor": "support-desk",
            "created_at": "2023-05-14T10:00:00Z",
        },
        {"content": "please send the invoice", "created_at": "2023-06-02T10:00:00Z"},
    )

    by_name = _search(alice, "what did Maria say")
    by_actor = _search(alice, "support desk")
    by_weekday = _search(alice, "Sunday")
    by_numbers = _search(alice, "2023-05-14")

    for results in (by_name, by_actor, by_weekday, by_numbers):
        assert _contents(results)[:1] == ["please send the money back"]
        # The hit shows what was said; the who/when line is only indexed.
        assert results[0]["name"] == "maria"
    assert _contents(_search(alice, "June"))[:1] == ["please send the invoice"]


def test_the_indexed_text_is_what_was_said_then_who_and_when(alice):
    _say(
        alice,
        {"content": "hello", "name": "maria", "created_at": "2023-05-04T23:30:00Z"},
        {"role": "assistant", "content": "", "actor": "bot", "created_at": "2024-02-29T00:00:00Z"},
    )

    texts = sorted(SearchItem.objects.values_list("content", flat=True))

    assert texts == [
        "\n\x1fbot Thursday February 2024",
        "maria\nhello\n\x1fThursday May 2023",
    ]
    assert [said_text(text) for text in texts] == ["", "maria\nhello"]


def test_vectors_are_made_from_what_was_said(alice, use_embedder):
    _say(alice, {"content": "the kite flew", "created_at": "2023-05-14T10:00:00Z"})
    use_embedder(alice)()

    stored = np.asarray(ItemEmbedding.objects.get().vector, dtype=np.float32)

    [expected] = embedder_for("builtin-hash", 64).embed(["the kite flew"])
    assert np.allclose(stored, expected, atol=1e-6)


class _Editor:
    """The part of a schema editor the migration uses (SQLite's refuses a test's transaction)."""

    connection = connection

    def execute(self, sql):
        with connection.cursor() as cursor:
            cursor.execute(sql)


def test_the_migration_gives_older_messages_their_who_and_when(alice):
    _say(alice, {"content": "the refund", "name": "maria", "created_at": "2023-05-14T10:00:00Z"})
    SearchItem.objects.update(content="maria\nthe refund")  # as indexed before the migration
    assert _search(alice, "Sunday") == []

    migration = importlib.import_module("apps.search.migrations.0009_message_who_when")
    migration.forward(None, _Editor())

    assert _contents(_search(alice, "Sunday")) == ["the refund"]
    assert SearchItem.objects.get().content.endswith("\x1fSunday May 2023")

    migration.backward(None, _Editor())
    assert SearchItem.objects.get().content == "maria\nthe refund"


def test_query_terms_keep_what_the_index_can_match():
    assert query_terms("Maria's refund, don't wait") == ["maria", "refund", "wait"]
