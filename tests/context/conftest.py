import pytest

from apps.jobs.services import job_run_pending
from apps.memconfig.services import config_update


@pytest.fixture
def configure():
    """Return a function that sets the actor's agent-level memory settings."""

    def set_config(actor, **changes):
        config_update(agent=actor.agent, changes=changes, changed_by="test")

    return set_config


@pytest.fixture
def remember():
    """Return a function that stores an approved entry for the actor's agent and resource."""

    def store(actor, content, resource_id="ann", approve=True):
        config_update(
            agent=actor.agent,
            changes={"episodic_approval_required": not approve},
            changed_by="test",
        )
        body = {"content": content}
        if resource_id is not None:
            body["resource_id"] = resource_id
        response = actor.post("/api/v1/episodic", body)
        assert response.status_code == 201, response.content
        job_run_pending()
        return response.json()

    return store


def context(actor, thread_id, **body):
    response = actor.post(f"/api/v1/threads/{thread_id}/context", body)
    assert response.status_code == 200, response.content
    return response.json()


def block(answer, name):
    return next(b for b in answer["blocks"] if b["name"] == name)


def talk(actor, thread_id, *texts):
    """Append alternating user and assistant messages."""
    roles = ["user", "assistant"]
    actor.append(
        thread_id, *[{"role": roles[n % 2], "content": text} for n, text in enumerate(texts)]
    )
