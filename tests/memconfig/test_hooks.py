"""Config changes reach the layers above memconfig through callbacks they register."""

import pytest

from apps.jobs.models import Job
from apps.memconfig import hooks
from apps.memconfig.selectors import config_level_get
from apps.memconfig.services import config_update
from apps.search.vectors import vectors_sync_enqueue


@pytest.fixture
def told(monkeypatch):
    """Register one recording callback in place of the real ones; return what it heard."""
    monkeypatch.setattr(hooks, "_embedder_changed", [])
    heard = []
    hooks.on_embedder_changed(lambda *, project_id: heard.append(project_id))
    return heard


def test_it_tells_the_callbacks_which_projects_embedder_changed(alice, told):
    project = alice.agent.project

    config_update(project=project, changes={"embedder_model": "builtin-hash"}, changed_by="ops")

    assert told == [project.id]


def test_it_tells_no_one_of_other_changes(alice, told):
    config_update(agent=alice.agent, changes={"recent_window": 5}, changed_by="ops")
    config_update(project=alice.agent.project, changes={"recent_window": 7}, changed_by="ops")

    assert told == []


def test_it_tells_no_one_when_nothing_changed(alice, told):
    project = alice.agent.project
    config_update(project=project, changes={"embedder_model": "builtin-hash"}, changed_by="ops")

    config_update(project=project, changes={"embedder_model": "builtin-hash"}, changed_by="ops")

    assert told == [project.id]


def test_a_callback_that_fails_undoes_the_change(alice, monkeypatch):
    monkeypatch.setattr(hooks, "_embedder_changed", [])

    def refuse(*, project_id):
        raise RuntimeError("index unavailable")

    hooks.on_embedder_changed(refuse)
    project = alice.agent.project

    with pytest.raises(RuntimeError, match="index unavailable"):
        config_update(project=project, changes={"embedder_model": "builtin-hash"}, changed_by="o")

    level = config_level_get(project=project)
    assert level is None or "embedder_model" not in level.values


def test_registering_the_same_callback_twice_calls_it_once(alice, told):
    callback = hooks._embedder_changed[0]
    hooks.on_embedder_changed(callback)

    config_update(
        project=alice.agent.project, changes={"embedder_model": "builtin-hash"}, changed_by="ops"
    )

    assert len(told) == 1


def test_search_registers_its_re_embedding_when_the_app_is_ready():
    assert vectors_sync_enqueue in hooks._embedder_changed


def test_changing_the_embedder_queues_the_projects_vector_job(alice):
    project = alice.agent.project

    config_update(project=project, changes={"embedder_model": "builtin-hash"}, changed_by="ops")

    assert Job.objects.filter(kind="search.vectors", key=str(project.id)).exists()
