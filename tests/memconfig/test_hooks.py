"""Config changes reach the layers above memconfig through the signal they connect to."""

import pytest

from apps.jobs.models import Job
from apps.memconfig import hooks
from apps.memconfig.selectors import config_level_get
from apps.memconfig.services import config_update


@pytest.fixture
def told():
    """Connect one recording receiver; return what it heard."""
    heard = []

    def receiver(sender, *, project_id, **kwargs):
        heard.append(project_id)

    hooks.embedder_changed.connect(receiver)
    yield heard
    hooks.embedder_changed.disconnect(receiver)


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


def test_a_receiver_that_fails_undoes_the_change(alice):
    def refuse(sender, **kwargs):
        raise RuntimeError("index unavailable")

    hooks.embedder_changed.connect(refuse)
    project = alice.agent.project

    try:
        with pytest.raises(RuntimeError, match="index unavailable"):
            config_update(
                project=project, changes={"embedder_model": "builtin-hash"}, changed_by="o"
            )
    finally:
        hooks.embedder_changed.disconnect(refuse)

    level = config_level_get(project=project)
    assert level is None or "embedder_model" not in level.values


def test_changing_the_embedder_queues_the_projects_vector_job(alice):
    project = alice.agent.project

    config_update(project=project, changes={"embedder_model": "builtin-hash"}, changed_by="ops")

    assert Job.objects.filter(kind="search.vectors", key=str(project.id)).exists()
