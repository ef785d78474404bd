"""Time-ordered ids: a row's id tells when it was stored."""

from datetime import UTC, datetime, timedelta

from apps.core.ids import uuid7, uuid7_floor


def test_ids_made_since_a_moment_are_at_least_its_floor_and_earlier_ones_below_it():
    before = uuid7()
    moment = datetime.now(UTC) + timedelta(milliseconds=2)
    while datetime.now(UTC) < moment + timedelta(milliseconds=2):
        pass  # the next id's millisecond is past the moment's

    after = uuid7()

    assert before < uuid7_floor(moment) <= after
    assert uuid7_floor(moment).version == 7
    assert uuid7_floor(moment + timedelta(hours=1)) > after
