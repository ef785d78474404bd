"""The indexed text of a message: what was said, then who said it and when.

A message item's text is its name, content and the start of its payload (what was said), then
a separator and a line naming its actor and its date as words ("Sunday May 2023"), so "what
did Maria say in May" can find it on both backends. A hit still shows the
message's own content; said_text() gives back the first part where the indexed text is shown
or embedded (the window boost, not the vectors, takes care of dates).

The date is in UTC and in English on both backends: weekday, month and year, no day of the
month and no digits of one. A query naming a day ("on 14 May", "2023-05-14") gets a window
boost for it (time_boost.py), while a day number in the line matched every number of a query
("chapter 2", "Postgres 13"): on the labelled set (bench/data/retrieval_set.json, SQLite, full
text alone) the temporal questions' MRR was 0.80 with the day number, 0.85 without it. Each
word is also one more entry in the full-text indexes of every message, and PostgreSQL's parser
reads "2023-05-14" as 2023, -05 and -14, which the query's words would not match anyway.
"""

# The unit separator: the full-text parsers of both backends read it as a space, message texts
# do not hold it (JSON payloads escape it), and the who/when line never does.
SEPARATOR = "\x1f"
_WEEKDAYS = "Sunday Monday Tuesday Wednesday Thursday Friday Saturday".split()
_MONTHS = (
    "January February March April May June July August September October November December"
).split()


def said_text(text: str) -> str:
    """Return an item's text without its who/when line (messages have one; other kinds not)."""
    said, separator, _ = text.rpartition(SEPARATOR)
    return said.rstrip("\n") if separator else text


def message_text_sql(vendor: str, payload_chars: int) -> str:
    """Return SQL for the indexed text of the threads_message row `m`."""
    if vendor == "postgresql":
        said = (
            "concat_ws(E'\\n', NULLIF(m.name, ''), NULLIF(m.content, ''), "
            f"left(m.payload::text, {int(payload_chars)}))"
        )
        # to_char's Day and Month are English whatever the locale (TMDay would translate).
        when = "to_char(m.created_at AT TIME ZONE 'UTC', 'FMDay FMMonth YYYY')"
        return f"{said} || E'\\n\\x1f' || concat_ws(' ', NULLIF(m.actor, ''), {when})"
    said = (
        "rtrim(coalesce(NULLIF(m.name, '') || char(10), '') "
        "|| coalesce(NULLIF(m.content, '') || char(10), '') "
        f"|| coalesce(substr(m.payload, 1, {int(payload_chars)}), ''), char(10))"
    )
    # SQLite's strftime() has no names of days or months: they are looked up by number.
    # Measured: about 7 us a row on top of the 2.5 the rest of the text takes (0.7 ms per
    # appended batch of 100 messages); cutting the parts from the stored text instead of
    # strftime() saved nothing measurable.
    weekday = _case("strftime('%w', m.created_at)", {str(i): n for i, n in enumerate(_WEEKDAYS)})
    month = _case("strftime('%m', m.created_at)", {f"{i:02}": n for i, n in enumerate(_MONTHS, 1)})
    when = f"{weekday} || ' ' || {month} || strftime(' %Y', m.created_at)"
    return f"{said} || char(10, 31) || coalesce(NULLIF(m.actor, '') || ' ', '') || {when}"


def _case(expression: str, names: dict[str, str]) -> str:
    branches = " ".join(f"WHEN '{key}' THEN '{name}'" for key, name in names.items())
    return f"(CASE {expression} {branches} END)"
