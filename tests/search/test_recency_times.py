"""What the recency bonus reads of each candidate: its created_at, on both backends."""

from datetime import UTC, datetime, timedelta

from apps.search.models import SearchItem
from apps.search.selectors import items_created_at
from apps.tenancy.services import project_get_or_create


def test_candidates_created_at_comes_back_as_stored(db):
    project, _ = project_get_or_create(slug="times")
    stamps = [
        datetime(2026, 3, 29, 1, 59, 58, 123456, tzinfo=UTC),
        datetime(1999, 12, 31, 23, 59, 59, tzinfo=UTC),
        datetime(2026, 11, 23, 4, 0, 0, 999999, tzinfo=UTC),
    ]
    items = SearchItem.objects.bulk_create(
        SearchItem(kind="message", project_id=project.id, content=f"t{n}", created_at=at)
        for n, at in enumerate(stamps)
    )

    found = items_created_at([item.id for item in items] + [10**9])  # and one that is gone

    assert set(found) == {item.id for item in items}
    for item, stamp in zip(items, stamps, strict=True):
        assert found[item.id].utcoffset() == timedelta(0)
        assert abs(found[item.id] - stamp) < timedelta(milliseconds=1)


def test_no_candidates_read_nothing(db, django_assert_num_queries):
    with django_assert_num_queries(0):
        assert items_created_at([]) == {}
