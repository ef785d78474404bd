"""Reader: rows of a model and its relations, as values() gives them, on both backends."""

from datetime import UTC, datetime

import pytest
from django.utils import timezone

from apps.core.rows import Reader, instance
from apps.search.models import SearchItem
from apps.tenancy.models import Agent, ApiKey, Project, Resource
from apps.tenancy.selectors import api_key_authenticate

NOW = datetime(2026, 11, 23, 6, 0, tzinfo=UTC)


def test_rows_equal_what_values_gives(alice):
    thread = alice.new_thread()
    alice.append(
        thread["id"],
        {"role": "user", "content": "the harbour crane", "metadata": {"lang": "en", "n": [1, 2]}},
    )
    SearchItem.objects.create(
        kind="chunk", project_id=alice.agent.project_id, content="no message", created_at=NOW
    )
    paths = (
        "id", "kind", "content", "project_id", "thread_id", "created_at", "visible",
        "message_id", "message__seq", "message__metadata", "message__created_at",
        "message__thread__title",
    )  # fmt: skip
    reader = Reader(SearchItem, paths)

    rows = reader.fetch("t0.project_id = %s", [reader.prep("project_id", alice.agent.project_id)])

    expected = list(SearchItem.objects.order_by("id").values(*paths))
    assert sorted(rows, key=lambda row: row["id"]) == expected
    message_row = next(row for row in rows if row["message_id"] is not None)
    assert message_row["message__metadata"] == {"lang": "en", "n": [1, 2]}
    assert message_row["created_at"].tzinfo is not None
    assert next(row for row in rows if row["message_id"] is None)["message__seq"] is None


def test_a_reader_takes_parameters_as_its_columns_do(alice):
    resource = Resource.objects.create(
        project=alice.agent.project, external_id="u-1", metadata={"tier": 2}
    )
    reader = Reader(Resource, ("id", "metadata", "project__slug"))

    [row] = reader.fetch("t0.id = %s", [reader.prep("id", resource.id)])

    assert row == {"id": resource.id, "metadata": {"tier": 2}, "project__slug": "acme"}


def test_instances_are_loaded_like_the_orms(alice):
    paths = tuple(f.attname for f in Agent._meta.concrete_fields)
    paths += tuple(f"project__{f.attname}" for f in Project._meta.concrete_fields)
    reader = Reader(Agent, paths)

    [row] = reader.fetch("t0.id = %s", [reader.prep("id", alice.agent.id)])
    agent, project = instance(Agent, row), instance(Project, row, "project__")

    assert agent == alice.agent and project == alice.agent.project
    assert not agent._state.adding and agent._state.db == "default"
    for field in Agent._meta.concrete_fields:
        assert getattr(agent, field.attname) == getattr(alice.agent, field.attname)
    assert project.created_at == Project.objects.get(pk=project.pk).created_at


def test_a_path_through_something_else_than_a_foreign_key_is_refused(db):
    with pytest.raises(ValueError, match="not a foreign key"):
        Reader(Project, ("agents__slug",)).fetch("1 = 1", [])


def test_the_key_lookup_loads_the_agent_and_project_in_one_statement(
    alice, django_assert_num_queries
):
    ApiKey.objects.filter(agent=alice.agent).update(last_used_at=timezone.now())

    with django_assert_num_queries(1):
        api_key = api_key_authenticate(alice.key)
        assert api_key.agent.project.slug == alice.agent.project.slug

    assert api_key.agent == alice.agent
    assert api_key.agent.project_id == alice.agent.project_id
    assert api_key == ApiKey.objects.get(agent=alice.agent)
