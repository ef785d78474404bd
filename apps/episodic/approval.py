"""Who approves what: each way an entry arrives has its own approval rule in the memory config.

An entry's origin is read from how it was written, so no writer has to say it twice:
extraction passes its run, consolidation and `[[MEMORY: …]]` markers write their own source
labels, a client program writes the label "api", and everything else is an agent's proposal
with a transcript label. `origin_filter` gives the same origins to the moderation queue.
"""

from django.db.models import Q

from apps.episodic.models import EntrySource, EntryStatus

# origin -> (the setting that holds its rule, what the console calls it)
ORIGINS = {
    "agent": ("episodic_approval_agent_proposals", "agent proposals"),
    "extraction": ("episodic_approval_extraction", "extraction after a turn"),
    "consolidation": ("episodic_approval_consolidation", "consolidation"),
    "memory_action": ("episodic_approval_memory_actions", "[[MEMORY: …]] markers"),
    "api": ("episodic_approval_api", "API writes (source api)"),
    "operator": ("", "operators"),
}
MODERATOR, AUTOMATIC = "moderator", "automatic"


def entry_origin(*, source: str, extraction=None) -> str:
    """Return where a new entry comes from: one of ORIGINS."""
    if extraction is not None:
        return "extraction"
    return {
        EntrySource.CONSOLIDATION: "consolidation",
        EntrySource.MEMORY_ACTION: "memory_action",
        EntrySource.API: "api",
        EntrySource.OPERATOR: "operator",
    }.get(source, "agent")


def entry_initial_status(*, config, origin: str, by_operator: bool = False) -> str:
    """Return the status a new entry of this origin starts with, by the agent's config.

    An operator's own entry is approved; `episodic_approval_required` off approves every
    origin; otherwise the origin's rule says whether a moderator approves it.
    """
    if by_operator or origin == "operator" or not config["episodic_approval_required"]:
        return EntryStatus.APPROVED
    setting = ORIGINS[origin][0]
    return EntryStatus.APPROVED if config[setting] == AUTOMATIC else EntryStatus.PENDING


def origin_filter(origin: str) -> Q:
    """Return the condition on entries that came from this origin (one of ORIGINS)."""
    if origin == "extraction":
        return Q(extraction__isnull=False)
    if origin == "agent":
        labels = [EntrySource.CONSOLIDATION, EntrySource.MEMORY_ACTION, EntrySource.API]
        return Q(extraction__isnull=True) & ~Q(source__in=[*labels, EntrySource.OPERATOR])
    return Q(source=origin, extraction__isnull=True)
