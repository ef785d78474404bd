"""manage.py memory_config: shows the effective config, and says what a --set changed."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from apps.memconfig.services import config_update


def _run(*args) -> str:
    out = StringIO()
    call_command("memory_config", *args, stdout=out)
    return out.getvalue()


def _config(output: str) -> dict:
    return json.loads(output[output.index("{") :])


def test_it_prints_the_effective_config_of_a_project(alice):
    config_update(project=alice.agent.project, changes={"recent_window": 7}, changed_by="t")

    shown = _config(_run("--project", "acme"))

    assert shown["recent_window"] == [7, "project"]
    assert shown["semantic_recall_top_k"][1] == "default"


def test_it_prints_the_effective_config_of_an_agent(alice):
    config_update(agent=alice.agent, changes={"recent_window": 9}, changed_by="t")

    shown = _config(_run("--project", "acme", "--agent", "alice"))

    assert shown["recent_window"] == [9, "agent"]


def test_it_says_what_a_set_and_an_unset_changed(alice):
    set_out = _run("--project", "acme", "--set", "recent_window=12")
    again = _run("--project", "acme", "--set", "recent_window=12")
    unset_out = _run("--project", "acme", "--unset", "recent_window")

    assert "project acme: recent_window = 12 (was inherited)" in set_out
    assert "config now at version 1" in set_out
    assert _config(set_out)["recent_window"] == [12, "project"]
    assert "No change" in again
    assert "project acme: unset recent_window (was 12; inherited again)" in unset_out
    assert _config(unset_out)["recent_window"][1] == "default"


def test_it_refuses_an_unknown_project(db):
    with pytest.raises(CommandError, match="No project 'nope'"):
        _run("--project", "nope")
