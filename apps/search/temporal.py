"""Dates and periods named in a query ("in May 2023", "last week", "on Tuesday") as days.

find_time_phrase() finds at most one phrase; its window() is a range of whole days (UTC, both
ends included), resolved against an anchor day: the day of the scope's latest message, not
today, so "yesterday" in a conversation back-filled from 2023 means a day of 2023. A phrase
without an anchor and without a year of its own ("in May") has no window.

Only phrases whose words say they are about time count: a month name alone ("May I ask",
"march forward") or a weekday alone is no phrase. Such words still find messages through the
date text each message is indexed with (see item_text.py).
"""

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta
from functools import lru_cache

_MONTH_NAMES = (
    "january february march april may june july august september october november december"
).split()
_MONTHS = {name: number for number, name in enumerate(_MONTH_NAMES, start=1)}
_MONTHS.update(
    {name[:3]: number for name, number in list(_MONTHS.items()) if name != "may"} | {"sept": 9}
)
_WEEKDAY_NAMES = "monday tuesday wednesday thursday friday saturday sunday".split()
_WEEKDAYS = {name: number for number, name in enumerate(_WEEKDAY_NAMES)}
_NUMBERS = {
    word: number
    for number, word in enumerate(
        "a two three four five six seven eight nine ten eleven twelve".split(), start=1
    )
} | {"an": 1, "one": 1, "couple": 2, "few": 3}
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}

_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_WEEKDAY = r"(?P<weekday>" + "|".join(_WEEKDAYS) + r")"
_DAY = r"(?P<day>[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_COUNT = r"(?P<count>\d{1,3}|" + "|".join(_NUMBERS) + r")"
_UNIT = r"(?P<unit>day|week|month|year)s?"


@dataclass(frozen=True)
class TimePhrase:
    """A period named in a query: where it is, and how to make it days given an anchor day."""

    start: int
    end: int
    needs_anchor: bool
    relative: bool  # its words name no date ("last week"): they say nothing of the content
    _resolve: Callable[[date | None], tuple[date, date] | None]

    def window(self, anchor: date | None) -> tuple[date, date] | None:
        """Return the (first, last) day the phrase names, or None if it cannot be placed."""
        if self.needs_anchor and anchor is None:
            return None
        return self._resolve(anchor)


# Every phrase holds a digit or one of these word starts: one pass over a query that names no
# period spares it the fourteen patterns (50-90 us a query, measured; 5 us with this).
_HINT = re.compile(
    r"\d|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|mon|tue|wed|thu|fri|sat|sun"
    r"|yesterday|today|tonight|night|morning|afternoon|evening|day|week|year)"
)


@lru_cache(maxsize=256)  # a search reads its query twice: for its words, then its window
def find_time_phrase(text: str) -> TimePhrase | None:
    """Return the longest time phrase of text (the first of equal ones), or None."""
    lowered = text.lower()
    if not _HINT.search(lowered):
        return None
    phrases = [
        phrase
        for pattern, build in _PATTERNS
        for match in pattern.finditer(lowered)
        if (phrase := build(match)) is not None
    ]
    return min(phrases, key=lambda p: (p.start - p.end, p.start), default=None)


def without_relative_words(text: str) -> str:
    """Return text, lower-cased, without the words of its relative time phrase ("last week").

    Such words describe when, not what: "yesterday" would match the messages that say
    "yesterday" (written the day after), not those of yesterday, which the window boosts. The
    words of a named date ("in May 2023", "on Tuesday") stay: every message is indexed with its
    date as text, so they match the same messages on both backends, and also in kinds that get
    no window (knowledge, entries, notes). Month and weekday names stay even in "last May".
    """
    phrase = find_time_phrase(text)
    if phrase is None or not phrase.relative:
        return text
    lowered = text.lower()  # the phrase's place is in the lower-cased text (it may be longer)
    kept = [
        word
        for word in re.findall(r"\w+", lowered[phrase.start : phrase.end])
        if word in _MONTHS or word in _WEEKDAYS
    ]
    return lowered[: phrase.start] + " " + " ".join(kept) + " " + lowered[phrase.end :]


# --- Calendar arithmetic ------------------------------------------------------------------


def _month_range(year: int, month: int) -> tuple[date, date]:
    first = date(year, month, 1)
    following = date(year + month // 12, month % 12 + 1, 1)
    return first, following - timedelta(days=1)


def _month_before(year: int, month: int, steps: int = 1) -> tuple[int, int]:
    index = year * 12 + (month - 1) - steps
    return index // 12, index % 12 + 1


def _week_of(day: date) -> tuple[date, date]:
    monday = day - timedelta(days=day.weekday())
    return monday, monday + timedelta(days=6)


def _latest_month(month: int, anchor: date, *, before_anchor_month: bool) -> tuple[date, date]:
    """The most recent such month up to the anchor's (strictly before it for "last May")."""
    year = anchor.year
    if month > anchor.month or (before_anchor_month and month == anchor.month):
        year -= 1
    return _month_range(year, month)


def _valid_day(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


# --- Phrases ------------------------------------------------------------------------------


def _phrase(match, resolve, *, needs_anchor=True, relative=False) -> TimePhrase:
    return TimePhrase(match.start(), match.end(), needs_anchor, relative, resolve)


def _count(match) -> int:
    word = match.group("count")
    return int(word) if word.isdigit() else _NUMBERS[word]


def _since(match, first: date | None) -> TimePhrase | None:
    """From the named day to the anchor: "since May", "since 2 June"."""
    if first is None:
        return None
    return _phrase(match, lambda anchor: (first, anchor) if first <= anchor else None)


def _iso_day(match):
    day = _valid_day(int(match.group("year")), int(match.group("mm")), int(match.group("dd")))
    if day is None:
        return None
    return _phrase(match, lambda _: (day, day), needs_anchor=False)


def _day_month_year(match):
    month = _MONTHS[match.group("month")]
    day = _valid_day(int(match.group("year")), month, int(match.group("day")))
    if day is None:
        return None
    return _phrase(match, lambda _: (day, day), needs_anchor=False)


def _day_month(match):
    """A day without a year ("on 14 May", "Tuesday March 4"): its latest occurrence up to the
    anchor, on the weekday named if one is (the latest such within eight years)."""
    month, number = _MONTHS[match.group("month")], int(match.group("day"))
    weekday = _WEEKDAYS.get(match.groupdict().get("weekday") or "")
    if _valid_day(2000, month, number) is None:  # 2000 had a 29 February
        return None

    def resolve(anchor):
        days = [_valid_day(year, month, number) for year in range(anchor.year, anchor.year - 8, -1)]
        days = [day for day in days if day is not None and day <= anchor]
        named = [day for day in days if weekday is None or day.weekday() == weekday]
        day = (named or days or [None])[0]
        return (day, day) if day else None

    return _phrase(match, resolve)


def _day_of_month(match):
    """A day number without a month ("on the 5th", "Sunday the 4th"): the latest such day up
    to the anchor, on the weekday named if one is (looking back three years)."""
    number = int(match.group("day"))
    weekday = _WEEKDAYS.get(match.groupdict().get("weekday") or "")

    def resolve(anchor):
        for back in range(36):
            day = _valid_day(*_month_before(anchor.year, anchor.month, back), number)
            if day and day <= anchor and (weekday is None or day.weekday() == weekday):
                return day, day
        return None

    return _phrase(match, resolve)


def _month_year(match):
    first_last = _month_range(int(match.group("year")), _MONTHS[match.group("month")])
    if match.group("since"):
        return _since(match, first_last[0])
    return _phrase(match, lambda _: first_last, needs_anchor=False)


def _month(match):
    """A month without a year ("in May", "last March"): its latest one up to the anchor."""
    month = _MONTHS[match.group("month")]
    last = match.group("lead") in ("last", "past", "previous")
    if match.group("lead") == "since":
        return _phrase(
            match,
            lambda anchor: (_latest_month(month, anchor, before_anchor_month=False)[0], anchor),
        )
    return _phrase(
        match,
        lambda anchor: _latest_month(month, anchor, before_anchor_month=last),
        relative=last,
    )


def _year(match):
    year = int(match.group("year"))
    if match.group("lead") == "since":
        return _since(match, date(year, 1, 1))
    return _phrase(match, lambda _: (date(year, 1, 1), date(year, 12, 31)), needs_anchor=False)


def _named_day(match):
    word = match.group(0).split()[-1]
    back = {"today": 0, "tonight": 0, "morning": 0, "afternoon": 0, "evening": 0}.get(word, 1)
    if match.group(0).startswith("the day before"):
        back = 2

    def resolve(anchor):
        day = anchor - timedelta(days=back)
        return day, day

    return _phrase(match, resolve, relative=True)


def _period(match):
    """ "last week", "this month", "the past year": a calendar period, or days up to the anchor."""
    lead, unit = match.group("lead"), match.group("unit")

    def resolve(anchor):
        if lead == "past":  # "the past week": the days up to the anchor
            return anchor - timedelta(days=_UNIT_DAYS[unit]), anchor
        steps = 1 if lead in ("last", "previous") else 0
        if unit == "day":
            day = anchor - timedelta(days=steps)
            return day, day
        if unit == "week":
            first, last = _week_of(anchor - timedelta(days=7 * steps))
        elif unit == "month":
            first, last = _month_range(*_month_before(anchor.year, anchor.month, steps))
        else:
            first, last = date(anchor.year - steps, 1, 1), date(anchor.year - steps, 12, 31)
        return first, min(last, anchor)

    return _phrase(match, resolve, relative=True)


def _last_count(match):
    """ "the last 3 days", "over the past two weeks": that many units up to the anchor."""
    days = _count(match) * _UNIT_DAYS[match.group("unit")]
    if days > 3660:
        return None
    return _phrase(match, lambda anchor: (anchor - timedelta(days=days), anchor), relative=True)


def _ago(match):
    """ "3 days ago", "a week ago", "two months ago": that day, or the week or month it is in."""
    count, unit = _count(match), match.group("unit")
    if count * _UNIT_DAYS[unit] > 3660:
        return None

    def resolve(anchor):
        if unit == "day":
            day = anchor - timedelta(days=count)
            return day, day
        if unit == "week":
            return _week_of(anchor - timedelta(days=7 * count))
        if unit == "month":
            return _month_range(*_month_before(anchor.year, anchor.month, count))
        return date(anchor.year - count, 1, 1), date(anchor.year - count, 12, 31)

    return _phrase(match, resolve, relative=True)


def _weekday(match):
    """ "on Tuesday" (this one or the latest before), "last Tuesday" (before the anchor day)."""
    weekday = _WEEKDAYS[match.group("weekday")]
    strictly_before = match.group("lead") in ("last", "past", "previous")

    def resolve(anchor):
        back = (anchor.weekday() - weekday) % 7
        if back == 0 and strictly_before:
            back = 7
        day = anchor - timedelta(days=back)
        return day, day

    return _phrase(match, resolve, relative=strictly_before)


def _weekend(match):
    steps = 1 if match.group("lead") == "last" else 0

    def resolve(anchor):
        monday, sunday = _week_of(anchor - timedelta(days=7 * steps))
        return sunday - timedelta(days=1), sunday

    return _phrase(match, resolve, relative=True)


def _compile(pattern: str) -> re.Pattern:
    return re.compile(r"\b" + pattern + r"\b")


_SINCE = r"(?:(?P<since>since|from)\s+)?"
_PATTERNS = [
    (_compile(r"(?P<year>(?:19|20)\d\d)[-/](?P<mm>0?[1-9]|1[0-2])[-/](?P<dd>[0-3]?\d)"), _iso_day),
    (_compile(rf"{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}"), _day_month_year),
    (_compile(rf"{_MONTH}\s+{_DAY},?\s+{_YEAR}"), _day_month_year),
    # A day and a month alone must be told apart from "may 2 people…": "on", "the" or a day
    # before the month ("14 May") says it is a date.
    (
        _compile(rf"(?:{_WEEKDAY},?\s+)?(?:the\s+)?{_DAY}\s+(?:of\s+)?{_MONTH}"),
        _day_month,
    ),
    (_compile(rf"(?:on|{_WEEKDAY},?)\s+{_MONTH}\s+{_DAY}"), _day_month),
    # A day number alone is a date only after "on the" or a weekday: "Sunday the 4th".
    (_compile(rf"(?:on\s+the|{_WEEKDAY},?(?:\s+the)?)\s+{_DAY}"), _day_of_month),
    (_compile(rf"{_MONTH}\s+(?P<day>[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)"), _day_month),
    (_compile(rf"{_SINCE}{_MONTH}\s+{_YEAR}"), _month_year),
    (
        _compile(
            rf"(?P<lead>in|during|since|last|past|previous|early|mid|late|throughout)"
            rf"(?:\s+(?:early|mid|late))?\s+{_MONTH}"
        ),
        _month,
    ),
    (_compile(rf"(?P<lead>in|during|since|throughout)\s+{_YEAR}"), _year),
    (
        _compile(
            r"(?:the\s+day\s+before\s+yesterday|yesterday|today|tonight|last\s+night"
            r"|this\s+(?:morning|afternoon|evening))"
        ),
        _named_day,
    ),
    (_compile(r"(?P<lead>last|previous|this|past)\s+(?P<unit>day|week|month|year)"), _period),
    (
        _compile(
            rf"(?:(?:in|over|during)\s+)?(?:the\s+)?(?:last|past|previous)\s+{_COUNT}\s+{_UNIT}"
        ),
        _last_count,
    ),
    (_compile(rf"{_COUNT}(?:\s+of)?\s+{_UNIT}\s+ago"), _ago),
    (_compile(rf"(?P<lead>on|last|past|previous|this)\s+{_WEEKDAY}"), _weekday),
    (_compile(r"(?P<lead>last|this)\s+weekend"), _weekend),
]
