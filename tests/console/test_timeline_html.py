"""The timeline's rows written in Python: the same text as the template filters they replace,
and every stored value escaped."""

import uuid
from datetime import UTC, datetime

import pytest
from django.template import Context, Template
from django.template.defaultfilters import truncatechars
from django.utils import timezone

from apps.console.timeline_html import time_html, truncate

DATE_FILTER = Template(
    '<time datetime="{{ value|date:\'c\' }}">{{ value|date:"Y-m-d H:i:s T" }}</time>'
)


@pytest.fixture
def operator(as_role):
    return as_role("operator")


@pytest.mark.parametrize(
    "text",
    [
        "turn 3",
        "x" * 30,
        "x" * 31,
        "carrier API kept answering 503 " * 8,
        "e\u0301" * 35,  # combining accents, composed by NFC and not counted
        "Ω" * 40,  # the ohm sign, which NFC turns into omega
        uuid.UUID("01a209a5-014e-74cc-9f52-7a6372aea96b"),
    ],
)
@pytest.mark.parametrize("length", [30, 40, 120])
def test_truncate_shows_what_truncatechars_shows(text, length):
    assert truncate(text, length) == truncatechars(text, length)


@pytest.mark.parametrize("zone", ["UTC", "Europe/Paris", "America/New_York", "Asia/Kolkata"])
@pytest.mark.parametrize("month", [1, 7])
def test_times_read_as_the_date_filter_writes_them(zone, month):
    value = datetime(2026, month, 1, 12, 30, 5, 123456, tzinfo=UTC)
    with timezone.override(zone):
        assert time_html(value) == DATE_FILTER.render(Context({"value": value}))


def test_every_stored_value_in_a_row_is_escaped(operator, alice):
    thread = alice.new_thread(title="Escapes")
    run = alice.post(f"/api/v1/threads/{thread['id']}/runs", {"name": "<b>run</b>"}).json()
    alice.append(
        thread["id"],
        {"role": "user", "content": "<script>alert(1)</script>", "run_id": run["id"]},
        {
            "role": "assistant",
            "kind": "tool_call",
            "name": "<i>tool</i>",
            "actor": "<u>bot</u>",
            "payload": {"id": "c1", "arguments": '{"q": "<img src=x>"}'},
            "metadata": {"note": "<em>meta</em>"},
            "run_id": run["id"],
        },
        {
            "role": "tool",
            "kind": "tool_result",
            "content": '{"answer": "</pre><hr>"}',
            "payload": {"tool_call_id": "c1"},
            "run_id": run["id"],
        },
    )
    response = operator.get(f"/console/threads/{thread['id']}/")
    content = response.content.decode()
    for raw in ["<script>", "<b>run", "<i>tool", "<u>bot", "<img", "<em>meta", "</pre><hr>"]:
        assert raw not in content
    for shown in ["&lt;script&gt;", "&lt;b&gt;run", "&lt;i&gt;tool&lt;/i&gt;", "&lt;u&gt;bot"]:
        assert shown in content
    assert "&lt;img src=x&gt;" in content and "&lt;em&gt;meta&lt;/em&gt;" in content
