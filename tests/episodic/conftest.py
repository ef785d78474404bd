"""The fake model server on loopback, for extraction; answers are scripted per test."""

import json

from apps.memconfig.services import config_update
from tests.console.conftest import as_role  # noqa: F401  (console users by role)


def configure(actor, **changes) -> None:
    config_update(agent=actor.agent, changes=changes, changed_by="test")


def entries_answer(*entries: dict) -> str:
    """The extractor's JSON answer proposing these entries."""
    return json.dumps({"entries": list(entries)})
