"""When a change to each memory setting takes effect, said beside it on the config page.

Every level's change is read through memconfig's effective config, which each process keeps in
its "hot" cache for HOT_CACHE_SECONDS: the process that saved the change forgets it at once,
every other web or worker process within that many seconds. What follows says which work reads
the setting next, from the code that reads it.
"""

from django.conf import settings

from apps.memconfig.schema import SETTINGS

NEXT_CONTEXT = "next context assembled (GET/POST …/context)"
NEXT_SEARCH = "next search (POST /search, /memory/search, a context's recall)"
NEXT_APPEND = "next message appended: the background memory work queued after it reads it"
NEXT_ENTRY = "next episodic entry proposed, extracted or edited"
NEXT_TURN = "next assistant turn appended (extraction runs after it)"
NEXT_SWEEP = "next consolidation sweep (every 10 s, per thread when due)"
REEMBED = (
    "re-embeds the whole project in the background; search keeps the old vectors (or full-text "
    "alone) until the new index is complete, then switches over"
)

EFFECTS: dict[str, str] = {
    "recent_window": NEXT_CONTEXT + "; the observer and compaction keep this tail from the next "
    "append on",
    "short_term_limit": NEXT_SWEEP,
    "semantic_recall_enabled": NEXT_CONTEXT,
    "semantic_recall_top_k": NEXT_CONTEXT,
    "semantic_recall_range_before": NEXT_CONTEXT + " and next message search",
    "semantic_recall_range_after": NEXT_CONTEXT + " and next message search",
    "context_max_tokens": "next context asked without max_tokens",
    **{s.key: NEXT_CONTEXT for s in SETTINGS if s.key.startswith("context_share_")},
    "knowledge_top_k": NEXT_CONTEXT,
    "notes_top_k": NEXT_CONTEXT,
    "search_min_similarity": NEXT_SEARCH,
    "search_context_neighbour_share": NEXT_SEARCH,
    "search_context_session_share": NEXT_SEARCH,
    "search_session_gap_minutes": NEXT_SEARCH,
    "embedder_model": REEMBED,
    "embedder_dimensions": REEMBED,
    "observer_model": NEXT_APPEND + "; extraction and consolidation use it next time too",
    "observer_message_tokens": NEXT_APPEND,
    "reflector_observation_tokens": NEXT_APPEND,
    "compaction_budget_tokens": NEXT_APPEND,
    "context_strategy": NEXT_CONTEXT + "; observations or summaries are written from the next "
    "append on (what exists stays)",
    "episodic_auto_inject": NEXT_CONTEXT,
    "episodic_auto_inject_top_k": NEXT_CONTEXT,
    "episodic_dedupe_threshold": NEXT_ENTRY,
    "episodic_max_entry_length": NEXT_ENTRY,
    "episodic_max_entries_per_turn": NEXT_TURN,
    "episodic_approval_required": "next entry stored, from any source (entries already stored "
    "keep their status)",
    **{
        s.key: "next entry stored from this source (entries already stored keep their status)"
        for s in SETTINGS
        if s.key.startswith("episodic_approval_") and s.key != "episodic_approval_required"
    },
    "episodic_extraction_enabled": NEXT_TURN,
    "extraction_model": NEXT_TURN,
    "consolidation_interval_seconds": NEXT_SWEEP,
}


def effect_of(key: str) -> str:
    """When a change of key takes effect, with the other processes' cache delay."""
    return f"{EFFECTS[key]}; in other processes within {settings.HOT_CACHE_SECONDS} s"
