"""One structured log line per request: method, route, status, duration and the key's prefix."""

import json
import logging
import sys

from apps.core.logging import JsonFormatter


def _lines(caplog) -> list[dict]:
    formatter = JsonFormatter()
    return [
        json.loads(formatter.format(record))
        for record in caplog.records
        if record.name == "memory_console.requests"
    ]


def test_each_api_request_logs_one_json_line_with_the_key_prefix(caplog, alice):
    caplog.set_level(logging.INFO, logger="memory_console.requests")
    thread = alice.new_thread()
    alice.get(f"/api/v1/threads/{thread['id']}")

    first, second = _lines(caplog)
    (prefix,) = alice.agent.api_keys.values_list("prefix", flat=True)
    assert first["method"] == "POST" and first["route"] == "api/v1/threads"
    assert first["status"] == 201 and first["key_prefix"] == prefix
    assert second["route"] == "api/v1/threads/<id:thread_id>"
    assert second["path"] == f"/api/v1/threads/{thread['id']}"
    assert second["status"] == 200
    assert isinstance(second["duration_ms"], float) and second["duration_ms"] >= 0
    assert {"time", "level", "logger", "message"} <= set(second)


def test_refused_and_unmatched_requests_are_logged_too(caplog, anonymous, db):
    caplog.set_level(logging.INFO, logger="memory_console.requests")
    anonymous.get("/api/v1/threads")
    anonymous.get("/no/such/page")

    refused, unmatched = _lines(caplog)
    assert refused["status"] == 401 and refused["key_prefix"] is None
    assert unmatched["status"] == 404 and unmatched["route"] == "unmatched"


def test_the_formatter_keeps_exceptions():
    try:
        raise ValueError("boom")
    except ValueError:
        record = logging.getLogger("x").makeRecord(
            "x", logging.ERROR, __file__, 1, "failed %s", ("here",), sys.exc_info()
        )
    line = json.loads(JsonFormatter().format(record))

    assert line["message"] == "failed here"
    assert "ValueError: boom" in line["exception"]
