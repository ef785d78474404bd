import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.core.management import call_command
from django.test import override_settings
from django.utils import timezone

from apps.core.errors import ApplicationError, Conflict
from apps.memconfig.schema import BY_KEY, SETTINGS, defaults_from_env
from apps.memconfig.selectors import config_effective, config_level_get
from apps.memconfig.services import config_rollback, config_update

# The README links the settings table; the table itself lives in the configuration page.
CONFIGURATION = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"


# The seeds' values, except where a measurement chose otherwise (each says where).
SEED_DEFAULTS = {
    "recent_window": 20,
    "short_term_limit": 10,
    # Seed 000: off, top-k 5. On with 60 by bench/context_recall.py: recall is what carries a
    # question's evidence, and the context's budget share bounds what it shows.
    "semantic_recall_enabled": True,
    "semantic_recall_top_k": 60,
    "semantic_recall_range_before": 2,
    "semantic_recall_range_after": 1,
    "context_max_tokens": 32_000,
    # The context's planned shares (not in the seeds): bench/context_recall.py.
    "context_share_recent": 0.15,
    "context_share_recall": 0.5,
    "context_share_history": 0.2,
    "context_share_memory": 0.1,
    "context_share_knowledge": 0.1,
    "context_share_notes": 0.05,
    "context_share_profile": 0.025,
    "context_share_session_memory": 0.025,
    "knowledge_top_k": 5,
    "notes_top_k": 3,
    "search_min_similarity": 0.5,
    "search_context_neighbour_share": 0.5,
    # Not in the seeds: chosen by leave-one-conversation-out cross-validation on the labelled
    # multi-session set (bench/retrieval.py; with SEARCH_SESSION_FOLLOW 12).
    "search_context_session_share": 0.4,
    "search_session_gap_minutes": 30.0,
    "context_strategy": "observational",
    "embedder_model": "",
    "embedder_dimensions": 1536,
    "observer_model": "google/gemini-2.5-flash",
    "observer_message_tokens": 30_000,
    "reflector_observation_tokens": 40_000,
    "compaction_budget_tokens": 100_000,
    "episodic_auto_inject": True,
    "episodic_auto_inject_top_k": 12,
    "episodic_dedupe_threshold": 0.86,
    "episodic_max_entry_length": 1000,
    "episodic_max_entries_per_turn": 3,
    "episodic_approval_required": True,
    "episodic_approval_agent_proposals": "moderator",
    "episodic_approval_extraction": "moderator",
    "episodic_approval_consolidation": "moderator",
    "episodic_approval_memory_actions": "moderator",
    "episodic_approval_api": "moderator",
    "episodic_extraction_enabled": True,
    "extraction_model": "",
    "consolidation_interval_seconds": 300,
}


def test_every_setting_has_a_seed_default_in_the_table():
    assert set(SEED_DEFAULTS) == {setting.key for setting in SETTINGS}


@pytest.mark.parametrize("key, expected", SEED_DEFAULTS.items())
def test_the_defaults_are_the_seeds_values(key, expected):
    default = defaults_from_env({})[key]

    assert BY_KEY[key].default == expected
    assert default == expected
    assert type(default) is type(expected)  # False is not 0, 20 is not 20.0


def test_environment_variables_override_defaults_and_bad_ones_are_named():
    assert defaults_from_env({"MEMORY_RECENT_WINDOW": "30"})["recent_window"] == 30
    assert defaults_from_env({"MEMORY_SEMANTIC_RECALL_ENABLED": "yes"})["semantic_recall_enabled"]
    with pytest.raises(ValueError, match="MEMORY_RECENT_WINDOW must be a whole number"):
        defaults_from_env({"MEMORY_RECENT_WINDOW": "lots"})


def test_the_agent_level_overrides_the_project_level_which_overrides_defaults(alice, bob):
    project = alice.agent.project
    config_update(
        project=project, changes={"recent_window": 40, "semantic_recall_top_k": 8}, changed_by="ops"
    )
    config_update(agent=alice.agent, changes={"recent_window": 60}, changed_by="ops")

    mine = config_effective(agent=alice.agent)
    theirs = config_effective(agent=bob.agent)

    assert (mine["recent_window"], mine.sources["recent_window"]) == (60, "agent")
    assert (mine["semantic_recall_top_k"], mine.sources["semantic_recall_top_k"]) == (8, "project")
    assert mine.sources["observer_message_tokens"] == "default"
    assert (theirs["recent_window"], theirs.sources["recent_window"]) == (40, "project")


@override_settings(MEMORY_DEFAULTS={**defaults_from_env({}), "recent_window": 33})
def test_the_default_level_comes_from_settings(alice):
    assert config_effective(agent=alice.agent)["recent_window"] == 33


def test_every_change_is_versioned_with_who_and_before_after(alice):
    config_update(agent=alice.agent, changes={"recent_window": 30}, changed_by="ana")
    config_update(
        agent=alice.agent, changes={"recent_window": 50, "short_term_limit": 5}, changed_by="ben"
    )
    config_update(agent=alice.agent, changes={"recent_window": 50}, changed_by="cy")  # no change

    config = config_level_get(agent=alice.agent)
    history = list(config.versions.order_by("version"))

    assert config.version == 2
    assert [(v.version, v.changed_by) for v in history] == [(1, "ana"), (2, "ben")]
    assert history[1].before == {"recent_window": 30}
    assert history[1].after == {"recent_window": 50, "short_term_limit": 5}


def test_a_version_records_when_the_change_was_made(alice):
    before = timezone.now()
    config_update(agent=alice.agent, changes={"recent_window": 30}, changed_by="ana")
    after = timezone.now()

    version = config_level_get(agent=alice.agent).versions.get()

    assert before <= version.changed_at <= after


def test_rollback_restores_earlier_values_as_a_new_version(alice):
    config_update(agent=alice.agent, changes={"recent_window": 30}, changed_by="ana")
    config = config_update(
        agent=alice.agent, changes={"recent_window": 90, "short_term_limit": 4}, changed_by="ben"
    )

    config = config_rollback(config=config, to_version=1, changed_by="ana")

    assert config.version == 3
    assert config.values == {"recent_window": 30}
    assert config_effective(agent=alice.agent).sources["short_term_limit"] == "default"


def test_none_removes_an_override(alice):
    config_update(agent=alice.agent, changes={"recent_window": 30}, changed_by="ana")

    config_update(agent=alice.agent, changes={"recent_window": None}, changed_by="ana")

    assert config_effective(agent=alice.agent).sources["recent_window"] == "default"


@pytest.mark.parametrize(
    "changes, says",
    [
        ({"recent_window": -1}, "recent_window: must be at least 0"),
        (
            {"recent_window": "ten"},
            "recent_window: must be a whole number, written with the digits 0-9",
        ),
        (
            {"recent_window": "１２"},
            "recent_window: must be a whole number, written with the digits 0-9",
        ),
        (
            {"search_session_gap_minutes": float("nan")},
            "search_session_gap_minutes: must be a finite number",
        ),
        (
            {"search_session_gap_minutes": float("inf")},
            "search_session_gap_minutes: must be a finite number",
        ),
        ({"recent_window": 2.5}, "recent_window: must be a whole number"),
        ({"episodic_dedupe_threshold": 1.5}, "episodic_dedupe_threshold: must be at most 1"),
        ({"semantic_recall_enabled": "perhaps"}, "semantic_recall_enabled: must be true or false"),
        ({"colour": "red"}, "colour: unknown setting"),
    ],
)
def test_it_rejects_invalid_values_with_a_clear_message(alice, changes, says):
    with pytest.raises(ApplicationError) as error:
        config_update(agent=alice.agent, changes=changes, changed_by="ana")

    assert error.value.message == says
    assert config_level_get(agent=alice.agent) is None


def test_a_local_embedder_must_have_its_models_dimensions(alice):
    project = alice.agent.project

    with pytest.raises(ApplicationError) as error:
        config_update(
            project=project, changes={"embedder_model": "local:minilm-onnx"}, changed_by="o"
        )

    assert error.value.message == (
        "embedder_dimensions: local:minilm-onnx makes 384-dimension vectors; "
        "set embedder_dimensions to 384"
    )
    assert config_level_get(project=project) is None
    config_update(
        project=project,
        changes={"embedder_model": "local:minilm-onnx", "embedder_dimensions": 384},
        changed_by="o",
    )
    assert config_effective(agent=alice.agent)["embedder_dimensions"] == 384


def test_a_local_embedder_this_server_has_not_is_refused_naming_those_it_has(alice):
    project = alice.agent.project

    with pytest.raises(ApplicationError) as error:
        config_update(
            project=project,
            changes={"embedder_model": "local:nope", "embedder_dimensions": 384},
            changed_by="o",
        )

    assert error.value.message == (
        "embedder_model: local:nope is no local embedder; choose one of: local:minilm-onnx, "
        "local:all-MiniLM-L6-v2"
    )
    assert config_level_get(project=project) is None


@pytest.mark.parametrize(
    "environment, says",
    [
        ({"MEMORY_EMBEDDER_MODEL": "local:nope"}, "MEMORY_EMBEDDER_MODEL: local:nope is no local"),
        (
            {"MEMORY_EMBEDDER_MODEL": "local:minilm-onnx", "MEMORY_EMBEDDER_DIMENSIONS": "256"},
            "MEMORY_EMBEDDER_DIMENSIONS: local:minilm-onnx makes 384-dimension vectors",
        ),
    ],
)
def test_a_global_local_embedder_that_cannot_work_stops_manage_py_check(environment, says):
    finished = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=django_settings.BASE_DIR,
        env={**os.environ, **environment},
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert finished.returncode != 0
    assert says in finished.stderr
    assert "providers.E001" in finished.stderr


def test_a_stale_expected_version_is_a_conflict(alice):
    config_update(agent=alice.agent, changes={"recent_window": 30}, changed_by="ana")

    with pytest.raises(Conflict):
        config_update(
            agent=alice.agent, changes={"recent_window": 31}, changed_by="ben", expected_version=0
        )


def test_the_api_returns_the_effective_config_of_the_calling_agent(alice, bob):
    config_update(agent=bob.agent, changes={"recent_window": 99}, changed_by="ops")

    body = alice.get("/api/v1/config").json()

    assert body["agent"] == "alice"
    assert body["project"] == "acme"
    assert set(body["values"]) == {setting.key for setting in SETTINGS}
    assert body["values"]["recent_window"] == 20
    assert body["sources"]["recent_window"] == "default"


def test_the_management_command_sets_and_shows_values(alice, capsys):
    call_command(
        "memory_config", "--project", "acme", "--agent", "alice", "--set", "recent_window=25"
    )

    assert '"recent_window": [\n    25,\n    "agent"\n  ]' in capsys.readouterr().out
    assert (
        config_level_get(agent=alice.agent).versions.get().changed_by == "manage.py memory_config"
    )


def test_the_configuration_page_documents_every_memory_variable():
    text = CONFIGURATION.read_text()

    missing = [setting.env_var for setting in SETTINGS if f"`{setting.env_var}`" not in text]

    assert missing == []
