from datetime import date

import pytest

from apps.search.query import query_terms
from apps.search.temporal import find_time_phrase, without_relative_words

# A Sunday: the day of a thread's latest message.
ANCHOR = date(2023, 5, 14)


def _window(query, anchor=ANCHOR):
    phrase = find_time_phrase(query)
    return phrase.window(anchor) if phrase else None


@pytest.mark.parametrize(
    "query, first, last",
    [
        ("what did Maria say in May about the refund", "2023-05-01", "2023-05-31"),
        ("the refund in May 2023", "2023-05-01", "2023-05-31"),
        ("during March", "2023-03-01", "2023-03-31"),
        ("in June", "2022-06-01", "2022-06-30"),  # no June yet in 2023: the latest one
        ("last May", "2022-05-01", "2022-05-31"),
        ("late Feb.", "2023-02-01", "2023-02-28"),
        ("on 14 May", "2023-05-14", "2023-05-14"),
        ("on the 3rd of May", "2023-05-03", "2023-05-03"),
        ("on May 2", "2023-05-02", "2023-05-02"),
        ("May 3rd", "2023-05-03", "2023-05-03"),
        ("on 20 May", "2022-05-20", "2022-05-20"),
        ("14 May 2023", "2023-05-14", "2023-05-14"),
        ("May 14, 2023", "2023-05-14", "2023-05-14"),
        ("14th of December 2021", "2021-12-14", "2021-12-14"),
        ("what happened on 2023-04-30", "2023-04-30", "2023-04-30"),
        ("in 2022", "2022-01-01", "2022-12-31"),
        ("since March", "2023-03-01", "2023-05-14"),
        ("since April 2023", "2023-04-01", "2023-05-14"),
        ("yesterday", "2023-05-13", "2023-05-13"),
        ("What did we decide YESTERDAY?", "2023-05-13", "2023-05-13"),
        ("the day before yesterday", "2023-05-12", "2023-05-12"),
        ("today", "2023-05-14", "2023-05-14"),
        ("this morning", "2023-05-14", "2023-05-14"),
        ("last night", "2023-05-13", "2023-05-13"),
        ("last week", "2023-05-01", "2023-05-07"),
        ("this week", "2023-05-08", "2023-05-14"),
        ("the past week", "2023-05-07", "2023-05-14"),
        ("last month", "2023-04-01", "2023-04-30"),
        ("this month", "2023-05-01", "2023-05-14"),
        ("last year", "2022-01-01", "2022-12-31"),
        ("3 days ago", "2023-05-11", "2023-05-11"),
        ("a week ago", "2023-05-01", "2023-05-07"),
        ("a couple of weeks ago", "2023-04-24", "2023-04-30"),
        ("two months ago", "2023-03-01", "2023-03-31"),
        ("in the last 3 days", "2023-05-11", "2023-05-14"),
        ("over the past two weeks", "2023-04-30", "2023-05-14"),
        ("on Tuesday", "2023-05-09", "2023-05-09"),
        ("on Sunday", "2023-05-14", "2023-05-14"),
        ("last Sunday", "2023-05-07", "2023-05-07"),
        ("last weekend", "2023-05-06", "2023-05-07"),
        ("on Monday March 4", "2019-03-04", "2019-03-04"),  # the latest 4 March on a Monday
        ("on Tuesday March 4", "2023-03-04", "2023-03-04"),  # none since 2016: the latest
        ("on Sunday 14 May", "2023-05-14", "2023-05-14"),
        ("Sunday the 7th", "2023-05-07", "2023-05-07"),
        ("on Thursday the 13th", "2023-04-13", "2023-04-13"),
        ("on the 24th", "2023-04-24", "2023-04-24"),
    ],
)
def test_it_reads_a_period_relative_to_the_anchor(query, first, last):
    assert _window(query) == (date.fromisoformat(first), date.fromisoformat(last))


@pytest.mark.parametrize(
    "query",
    [
        "May I ask about the refund",
        "you may want to march forward",
        "we march on",
        "may 2 people join the call",
        "the Sunday roast recipe",
        "the 2023 budget",
        "version 2.14 release",
        "the last word",
        "this is the week's plan",
        "the past is the past",
        "refund for order 31",
        "the 3rd attempt",
        "",
    ],
)
def test_it_finds_no_period_where_there_is_none(query):
    assert find_time_phrase(query) is None


@pytest.mark.parametrize(
    "query",
    ["on 31 February", "2023-02-30", "in the last 9999 years", "99999 days ago"],
)
def test_impossible_dates_make_no_window(query):
    assert _window(query) is None


def test_a_period_without_a_year_needs_an_anchor_and_a_dated_one_does_not():
    assert find_time_phrase("last week").window(None) is None
    assert find_time_phrase("in May").window(None) is None
    assert find_time_phrase("in May 2021").window(None) == (date(2021, 5, 1), date(2021, 5, 31))


def test_the_longest_phrase_wins():
    phrase = find_time_phrase("the refund in May 2023 or so")

    assert "the refund in May 2023 or so"[phrase.start : phrase.end] == "May 2023"


@pytest.mark.parametrize(
    "query, terms",
    [
        # Relative words say when, not what: they leave the lexical terms.
        ("what did we decide yesterday", ["decide"]),
        ("refund last week", ["refund"]),
        ("the invoice from 3 days ago", ["invoice"]),
        ("what did Maria say last Tuesday", ["maria", "say", "tuesday"]),
        # Named dates stay: they match the date text messages are indexed with.
        ("what did Maria say in May about the refund", ["maria", "say", "may", "refund"]),
        ("invoice on 14 May 2023", ["invoice", "14", "may", "2023"]),
        # Not time phrases: every word stays.
        ("May I ask about the last word", ["may", "ask", "last", "word"]),
    ],
)
def test_relative_time_words_leave_the_query_terms(query, terms):
    assert query_terms(query) == terms


def test_a_relative_phrase_is_cut_where_it_is_in_the_lower_cased_text():
    # "İ" lower-cases to two characters, so the phrase's place differs from the original's.
    terms = query_terms("İstanbul office YESTERDAY notes")

    assert terms[-2:] == ["office", "notes"] and "yesterday" not in terms


def test_text_without_a_relative_phrase_is_unchanged():
    assert without_relative_words("in May 2023") == "in May 2023"
    assert without_relative_words("plain words") == "plain words"
