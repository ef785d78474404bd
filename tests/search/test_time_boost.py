"""A period named in a query boosts the messages inside it, through POST /api/v1/search, on
both backends."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext


def _search(actor, query, **body):
    response = actor.post("/api/v1/search", {"query": query, **body})
    assert response.status_code == 200, response.content
    return response.json()["results"]


@pytest.fixture
def refunds(alice):
    """Two equal refund messages, the older one two weeks before the thread's last message."""
    thread = alice.new_thread()
    alice.append(
        thread["id"],
        {"role": "user", "content": "the refund was approved", "created_at": "2023-04-26T09:00Z"},
        {"role": "user", "content": "the refund was approved", "created_at": "2023-05-10T09:00Z"},
        {"role": "user", "content": "thanks, bye", "created_at": "2023-05-14T18:00Z"},
    )
    return thread


def test_a_relative_period_boosts_the_messages_inside_it(alice, refunds):
    plain = _search(alice, "refund", thread_id=refunds["id"])
    dated = _search(alice, "the refund two weeks ago", thread_id=refunds["id"])

    assert [hit["seq"] for hit in plain] == [2, 1]  # equal words: the newer one first
    assert [hit["seq"] for hit in dated] == [1, 2]
    # "two weeks ago" from the thread's last message (Sunday 14 May): the week of 24-30 April.
    assert dated[0]["signals"]["time"] == {"window": ["2023-04-24", "2023-04-30"], "score": 1.0}
    assert dated[1]["signals"]["time"]["score"] == 0.0
    assert dated[0]["score"] > dated[1]["score"]
    assert "time" not in plain[0]["signals"]


def test_a_named_month_boosts_its_messages_across_the_agents_threads(alice, refunds):
    other = alice.new_thread()
    alice.append(
        other["id"],
        {"role": "user", "content": "a refund in March", "created_at": "2023-03-20T09:00Z"},
    )

    [first, *rest] = _search(alice, "refund in late April")

    assert (first["thread_id"], first["seq"]) == (refunds["id"], 1)
    assert first["signals"]["time"]["window"] == ["2023-04-01", "2023-04-30"]
    assert [hit["signals"]["time"]["score"] for hit in rest] == [0.0, 0.0]


def test_the_boost_follows_its_setting(alice, refunds, settings):
    settings.SEARCH_WEIGHT_TEMPORAL = 0.0

    dated = _search(alice, "the refund two weeks ago", thread_id=refunds["id"])

    assert [hit["seq"] for hit in dated] == [2, 1]
    assert "time" not in dated[0]["signals"]


def test_a_period_costs_one_read_of_the_newest_message(alice, refunds):
    _search(alice, "the refund", thread_id=refunds["id"])  # fills the per-process caches
    with CaptureQueriesContext(connection) as plain:
        _search(alice, "the refund", thread_id=refunds["id"])
    with CaptureQueriesContext(connection) as dated:
        _search(alice, "the refund last week", thread_id=refunds["id"])

    # The same words; the period adds one read: the day of the thread's newest message.
    assert len(dated.captured_queries) == len(plain.captured_queries) + 1


@pytest.mark.parametrize(
    ("said_at", "query"),
    [
        ("9999-12-31T00:00:00Z", "zanzibar this week"),
        ("9999-12-31T00:00:00Z", "zanzibar today"),
        ("0001-01-01T00:00:00Z", "zanzibar last week"),
        ("0001-01-01T00:00:00Z", "zanzibar 3 days ago"),
    ],
)
def test_a_period_off_the_calendar_is_no_window(alice, said_at, query):
    # A message dated at the calendar's edge: the period placed against it runs off the
    # calendar, so the query has no window, and the message is still found by its words.
    thread = alice.new_thread()
    alice.append(thread["id"], {"role": "user", "content": "zanzibar", "created_at": said_at})

    for body in ({"thread_id": thread["id"]}, {}):
        hits = _search(alice, query, **body)
        assert [hit["content"] for hit in hits] == ["zanzibar"]
        assert "time" not in hits[0]["signals"]
