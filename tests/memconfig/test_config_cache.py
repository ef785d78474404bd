"""The effective config comes from the per-process hot cache and follows every change."""

from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.memconfig.selectors import config_effective, config_effective_for_project
from apps.memconfig.services import config_rollback, config_update


def _config_reads(agent) -> tuple[dict, int]:
    with CaptureQueriesContext(connection) as queries:
        values = config_effective(agent=agent).values
    return values, sum("memconfig_memoryconfig" in query["sql"] for query in queries)


def test_it_reads_the_levels_once_and_then_serves_them_from_the_cache(alice):
    assert _config_reads(alice.agent)[1] == 1

    assert _config_reads(alice.agent)[1] == 0


def test_an_agent_or_project_change_is_seen_on_the_next_read(alice, bob):
    assert _config_reads(alice.agent)[0]["recent_window"] == 20
    config_update(agent=alice.agent, changes={"recent_window": 7}, changed_by="t")

    assert _config_reads(alice.agent)[0]["recent_window"] == 7
    _config_reads(bob.agent)  # cached
    config_update(project=bob.agent.project, changes={"recent_window": 9}, changed_by="t")
    assert _config_reads(bob.agent)[0]["recent_window"] == 9


def test_a_rollback_is_seen_on_the_next_read(alice):
    config = config_update(agent=alice.agent, changes={"recent_window": 7}, changed_by="t")
    config_update(agent=alice.agent, changes={"recent_window": 8}, changed_by="t")
    assert _config_reads(alice.agent)[0]["recent_window"] == 8

    config_rollback(config=config, to_version=1, changed_by="t")

    assert _config_reads(alice.agent)[0]["recent_window"] == 7


def test_the_project_level_is_cached_too_and_follows_a_change(alice):
    project_id = alice.agent.project_id
    with CaptureQueriesContext(connection) as first:
        config_effective_for_project(project_id=project_id)
    with CaptureQueriesContext(connection) as second:
        config_effective_for_project(project_id=project_id)
    config_update(project=alice.agent.project, changes={"knowledge_top_k": 9}, changed_by="t")

    assert len(first) == 1 and len(second) == 0
    assert config_effective_for_project(project_id=project_id)["knowledge_top_k"] == 9
