"""Every memory setting: its type, bounds, default and the environment variable for the default.

This module is plain Python so that settings.py can read the global defaults from it.
"""

import math
import os
import re
from dataclasses import dataclass
from typing import Any

from apps.core.text import text_problem

# A number as text: a whole number, or a decimal one with an optional exponent (ASCII digits).
_WRITTEN = {
    int: re.compile(r"[-+]?[0-9]+", re.ASCII),
    float: re.compile(r"[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?", re.ASCII),
}


@dataclass(frozen=True)
class Setting:
    key: str
    type: type
    default: Any
    help: str
    minimum: float | None = None
    maximum: float | None = None
    # Settings that shape a project-wide index (the embedder) cannot differ between its agents.
    project_only: bool = False
    # A str setting that names one of a few behaviours accepts only these values.
    choices: tuple[str, ...] | None = None

    @property
    def in_use(self) -> bool:
        """Whether code acts on this setting yet (see NOT_USED_YET)."""
        return self.key not in NOT_USED_YET

    @property
    def env_var(self) -> str:
        return f"MEMORY_{self.key.upper()}"

    def parse(self, value: Any) -> Any:
        """Return value coerced to this setting's type, or raise ValueError saying what to fix."""
        if self.type is bool:
            if isinstance(value, bool):
                return value
            if isinstance(value, str) and value.strip().lower() in {"1", "true", "yes", "on"}:
                return True
            if isinstance(value, str) and value.strip().lower() in {"0", "false", "no", "off"}:
                return False
            raise ValueError("must be true or false")
        if self.type is str:
            if not isinstance(value, str):
                raise ValueError("must be a string")
            if (problem := text_problem(value)) is not None:
                raise ValueError(problem)
            if len(value) > 200:
                raise ValueError("must be at most 200 characters")
            if self.choices is not None and value.strip() not in self.choices:
                raise ValueError(f"must be one of {', '.join(self.choices)}")
            return value.strip()
        if isinstance(value, bool):
            raise ValueError(f"must be a {self._type_word()}")
        # Text (a form's, an environment variable's) is a number as written with the digits
        # 0-9: Python's int() and float() also read "1_000", full-width digits and "nan", and
        # a NaN passes every bound (the console stored one, and the database refused the JSON).
        if isinstance(value, str) and not _WRITTEN[self.type].fullmatch(value.strip()):
            raise ValueError(f"must be a {self._type_word()}, written with the digits 0-9")
        try:
            number = self.type(value)
        except (TypeError, ValueError):
            raise ValueError(f"must be a {self._type_word()}") from None
        if not math.isfinite(number):
            raise ValueError(f"must be a finite {self._type_word()}")
        if self.type is int and isinstance(value, float) and not value.is_integer():
            raise ValueError("must be a whole number")
        if self.minimum is not None and number < self.minimum:
            raise ValueError(f"must be at least {self.minimum:g}")
        if self.maximum is not None and number > self.maximum:
            raise ValueError(f"must be at most {self.maximum:g}")
        return number

    def _type_word(self) -> str:
        return "whole number" if self.type is int else "number"


# (name, default, help) of each block's share of a context's max_tokens.
CONTEXT_SHARES = (
    ("recent", 0.15, "Share of max_tokens planned for the recent messages."),
    ("recall", 0.5, "Share of max_tokens planned for recalled past messages (with a query)."),
    ("history", 0.2, "Share of max_tokens planned for observations or the summary."),
    ("memory", 0.1, "Share of max_tokens planned for <memory> entries."),
    ("knowledge", 0.1, "Share of max_tokens planned for knowledge chunks."),
    ("notes", 0.05, "Share of max_tokens planned for notes."),
    ("profile", 0.025, "Share of max_tokens planned for the user profile."),
    ("session_memory", 0.025, "Share of max_tokens planned for the session memory."),
)
# (setting suffix, where its entries come from) of each episodic approval rule.
EPISODIC_APPROVAL_SOURCES = (
    ("agent_proposals", "agents' proposals (POST /episodic, the remember tool)"),
    ("extraction", "extraction after each turn"),
    ("consolidation", "consolidation of older messages"),
    ("memory_actions", "[[MEMORY: …]] markers in an agent's answer"),
    ("api", 'API writes with source "api" (no transcript evidence)'),
)

SETTINGS: tuple[Setting, ...] = (
    Setting(
        "recent_window",
        int,
        20,
        "Recent messages sent with every context (as many of them as max_tokens keeps).",
        0,
        1000,
    ),
    Setting("short_term_limit", int, 10, "Messages kept short-term before consolidation.", 1, 1000),
    Setting(
        "semantic_recall_enabled",
        bool,
        True,
        "Recall past messages of the thread that match the query (full-text, hybrid with an "
        "embedder), each with the messages around it.",
    ),
    # 60, not the seed's 5: the budget share, not the count, bounds what recall shows (past
    # half of its grant, hits come without their neighbours). On the labelled set's long
    # threads, where the answers lie deep in the ranking, 20 carried the evidence in 77 % of
    # 4k-token contexts, 60 in 81 % (search: 84 %); cross-validation chose 60 to 100, which
    # measured the same on the set (bench/context_recall.py, bench/RESULTS.md).
    Setting("semantic_recall_top_k", int, 60, "Semantic matches per query.", 1, 100),
    Setting("semantic_recall_range_before", int, 2, "Messages before each match.", 0, 20),
    Setting("semantic_recall_range_after", int, 1, "Messages after each match.", 0, 20),
    Setting("context_max_tokens", int, 32_000, "Default context budget.", 500, 2_000_000),
    # A context's budget is planned as shares of max_tokens before anything is searched
    # (apps/context/budget.py); what a block does not need flows on to the others. The
    # defaults are what leave-one-conversation-out cross-validation chose on the labelled
    # multi-session set (bench/context_recall.py, bench/RESULTS.md): recall 0.5 and recent
    # 0.15 measured the same as 0.6 and 0.1 on its conversations and their long threads, and
    # leave a 300-step tool loop at 32k tokens 15 of its newest 20 messages instead of 6.
    *(
        Setting(f"context_share_{name}", float, default, help_text, 0.0, 1.0)
        for name, default, help_text in CONTEXT_SHARES
    ),
    Setting("knowledge_top_k", int, 5, "Knowledge chunks per context.", 0, 100),
    Setting("notes_top_k", int, 3, "Notes per context (0: no notes block).", 0, 20),
    Setting(
        "search_min_similarity",
        float,
        0.5,
        "Default floor of POST /search and /memory/search: hits less similar are dropped.",
        0.0,
        1.0,
    ),
    # The shares' defaults are what leave-one-conversation-out cross-validation chose on the
    # multi-session labelled set (bench/retrieval.py, bench/RESULTS.md), full-text alone and
    # with the local embedder alike.
    Setting(
        "search_context_neighbour_share",
        float,
        0.5,
        "Share of the best score of the messages just before and after it (same session) "
        "that a message gains in search.",
        0.0,
        1.0,
    ),
    Setting(
        "search_context_session_share",
        float,
        0.4,
        "Share of the best score of the other messages of its session that a message gains "
        "in search.",
        0.0,
        1.0,
    ),
    Setting(
        "search_session_gap_minutes",
        float,
        30.0,
        "A pause longer than this between messages ends a session (a run is one session).",
        0.0,
        10_080.0,
    ),
    Setting(
        "embedder_model", str, "", "Embedding model; empty disables vectors.", project_only=True
    ),
    Setting("embedder_dimensions", int, 1536, "Embedding dimensions.", 8, 4096, project_only=True),
    Setting("observer_model", str, "google/gemini-2.5-flash", "LLM for Observer/Reflector."),
    Setting("observer_message_tokens", int, 30_000, "Observer trigger threshold.", 100, 10_000_000),
    Setting("reflector_observation_tokens", int, 40_000, "Reflector threshold.", 100, 10_000_000),
    Setting("compaction_budget_tokens", int, 100_000, "Compact above this many.", 1000, 10_000_000),
    Setting(
        "context_strategy",
        str,
        "observational",
        "Older messages become observations, a compaction summary, or neither.",
        choices=("observational", "compaction", "none"),
    ),
    Setting("episodic_auto_inject", bool, True, "Inject <memory> entries into context."),
    Setting("episodic_auto_inject_top_k", int, 12, "Entries injected per turn.", 0, 200),
    Setting("episodic_dedupe_threshold", float, 0.86, "Similarity deemed a duplicate.", 0.0, 1.0),
    Setting("episodic_max_entry_length", int, 1000, "Characters per entry.", 50, 20_000),
    Setting("episodic_max_entries_per_turn", int, 3, "Entries extracted per turn.", 0, 50),
    Setting(
        "episodic_approval_required",
        bool,
        True,
        "New entries wait for a moderator as each source's rule below says; off approves "
        "entries from every source on arrival.",
    ),
    # Who approves an entry, by where it came from (apps/episodic/approval.py). Everything a
    # model or an agent writes waits for a moderator by default: only approved entries reach
    # an agent's context, and a wrong memory repeated at every turn costs more than a late one.
    *(
        Setting(
            f"episodic_approval_{origin}",
            str,
            "moderator",
            f"Who approves entries from {what}: a moderator, or automatic on arrival.",
            choices=("moderator", "automatic"),
        )
        for origin, what in EPISODIC_APPROVAL_SOURCES
    ),
    Setting(
        "episodic_extraction_enabled",
        bool,
        True,
        "Extract episodic entries from each turn with the LLM (needs an endpoint).",
    ),
    Setting("extraction_model", str, "", "LLM for episodic extraction; empty = observer_model."),
    Setting("consolidation_interval_seconds", int, 300, "Consolidation cadence.", 10, 86_400),
)

# Settings that no code acts on yet: GET /config lists them under not_used_yet and the console
# shows them read-only, so that no one edits a setting to no effect. A setting leaves this set
# in the change that gives it its behaviour.
NOT_USED_YET: frozenset[str] = frozenset()

BY_KEY: dict[str, Setting] = {setting.key: setting for setting in SETTINGS}


def defaults_from_env(environ: dict[str, str] | None = None) -> dict[str, Any]:
    """Return the global defaults, each overridable by its MEMORY_<KEY> variable."""
    environ = os.environ if environ is None else environ
    values = {}
    for setting in SETTINGS:
        raw = environ.get(setting.env_var)
        if raw is None or (raw == "" and setting.type is not str):
            values[setting.key] = setting.default
            continue
        try:
            values[setting.key] = setting.parse(raw)
        except ValueError as exc:
            raise ValueError(f"{setting.env_var} {exc}") from None
    return values
