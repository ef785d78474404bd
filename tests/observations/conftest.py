"""Threads to observe, thresholds set low per test, and the fake model server on loopback."""

import json

import pytest

from apps.jobs.services import job_run_pending
from apps.memconfig.services import config_update
from apps.observations import extractive
from apps.observations.prompts import compaction, observer, reflector
from tests.observations.toolloop import tool_loop


def configure(actor, **changes) -> None:
    config_update(agent=actor.agent, changes=changes, changed_by="test")


def fill(actor, thread_id, messages, *, batch: int = 10, settle: bool = True) -> None:
    """Append messages in batches as an agent would, running the background jobs after each."""
    for start in range(0, len(messages), batch):
        actor.append(thread_id, *messages[start : start + batch])
        if settle:
            job_run_pending()


def words(count: int, tag: str = "note") -> str:
    """Return text of about count tokens (one per short word)."""
    return " ".join(f"{tag}" for _ in range(count))


def user_text(body: dict) -> str:
    return body["messages"][-1]["content"]


def system_text(body: dict) -> str:
    return body["messages"][0]["content"]


def faithful_model(body: dict) -> str:
    """Answer each task as a careful model would: short, every identifier kept."""
    system, text = system_text(body), user_text(body)
    kept = " ".join(sorted(extractive.identifiers_in(text)))
    if system == observer.SYSTEM:
        return json.dumps({"observations": [f"Worked through the messages; kept {kept}."]})
    if system == reflector.SYSTEM:
        return json.dumps({"reflection": f"Reflected: {kept}"})
    if system == compaction.SYSTEM:
        return json.dumps({"summary": f"Summary: {kept}"})
    raise AssertionError(f"unexpected prompt: {system[:80]}")


@pytest.fixture
def loop() -> list[dict]:
    return tool_loop(300)
