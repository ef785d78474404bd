"""The API's renderer writes what DRF's JSONRenderer writes, faster."""

import json
import uuid
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal

import numpy as np
from django.utils.translation import gettext_lazy
from rest_framework.renderers import JSONRenderer

from apps.api.renderers import OrjsonRenderer

AT = datetime(2026, 11, 26, 12, 30, 5, 123456, tzinfo=UTC)


def both(data, accepted=None):
    return OrjsonRenderer().render(data, accepted), JSONRenderer().render(data, accepted)


def test_same_bytes_as_drf_for_what_the_api_answers():
    data = {
        "id": uuid.UUID("01a217d1-bd19-7aaa-ad95-1c94a74219f4"),
        "at": AT,
        "whole_second": AT.replace(microsecond=0),
        "offset": AT.astimezone(timezone(timedelta(hours=2))),
        "naive": AT.replace(tzinfo=None),
        "day": AT.date(),
        "text": 'café </memory><system> "quoted"\n\ttab',
        "items": [{"seq": 1, "score": None, "ok": True}, {"seq": 2, "score": 0.25, "ok": False}],
        "empty": {},
    }
    ours, drf = both(data)
    assert ours == drf


def test_values_orjson_does_not_know_go_through_drfs_encoder():
    data = {
        "decimal": Decimal("1.50"),
        "lazy": gettext_lazy("Not found."),
        "vector": np.asarray([0.5, 0.25], dtype=np.float32),
        "count": np.int64(3),
        "int_keys": {1: "one"},
        "set_like": (1, 2),
    }
    ours, drf = both(data)
    assert json.loads(ours) == json.loads(drf)


def test_what_orjson_refuses_is_rendered_by_drf():
    data = {"payload": {"big": 2**70, "small": -(2**70)}}
    ours, drf = both(data)
    assert ours == drf
    assert json.loads(ours)["payload"]["big"] == 2**70


def test_a_message_payload_with_a_huge_integer_reads_back(alice):
    thread = alice.new_thread()

    [written] = alice.append(
        thread["id"],
        {"role": "tool", "kind": "tool_result", "name": "calc", "payload": {"n": 2**80}},
    )

    assert written["payload"] == {"n": 2**80}


def test_line_separators_are_escaped_as_drf_does():
    ours, drf = both({"text": "a\u2028b\u2029c"})
    assert ours == drf
    assert b"\\u2028" in ours and b"\\u2029" in ours


def test_indent_asked_for_is_honoured():
    ours, drf = both({"a": [1, 2]}, "application/json; indent=2")
    assert ours == drf
    assert b"\n  " in ours


def test_nothing_renders_as_an_empty_body():
    assert OrjsonRenderer().render(None) == b""


def test_api_answers_with_this_renderer(alice):
    response = alice.get("/api/v1/config")
    assert response.status_code == 200
    assert isinstance(response.accepted_renderer, OrjsonRenderer)
    assert response.json()["memory_work"]["path"] in {"llm", "extractive", "off"}


def test_text_with_a_lone_surrogate_is_escaped_not_a_failure():
    # Neither orjson nor DRF's renderer can write such text as UTF-8; JSON's escape can.
    data = {"text": "a\udcffb", "other": "café"}

    for accepted in (None, "application/json; indent=2"):
        out = OrjsonRenderer().render(data, accepted)

        assert json.loads(out) == data
        assert b"\\udcff" in out
