"""Plan a context's token budget before anything is searched, then let unused shares flow on.

    planned[b] = ⌊max_tokens · share_b / Σ shares⌋          every block b, from the settings
    granted[b] = min(need_b, planned[b]) + flow_b

need_b is what the block's candidates take whole (its tags included). What the blocks that need
less than planned leave, and what the rounding leaves, is the flow: it goes to the blocks that
want more, in FLOW_ORDER, each taking what it still needs, until none is left. Σ granted never
exceeds max_tokens, so no block's pieces can push another's out: each block fits its own pieces
into its grant (assembly.py), and a block with no candidates takes nothing.

The profile and session memory come first in FLOW_ORDER: they are small, bounded and what the
agent knows about this user and this task. The older history (observations or the summary)
comes next: it is the agent's own compressed record, a stable prefix a provider's prompt cache
keeps serving, and in a tool loop it is the history itself (a 300-step loop at 40k tokens keeps
its observations whole this way). Recall follows: while there is a query it is the block
most likely to hold a question's evidence (on bench/context_recall.py's observed threads,
taking the flow before the history or after it measured the same at 2k, 4k and 8k tokens), and
its own share is never taken by another block, however long the observations are.
"""

from dataclasses import dataclass

# The share setting of each block; observations and a compaction summary stand for the same
# older history (a thread has one or the other), so they draw on one share.
SHARE_SETTINGS = {
    "user_profile": "context_share_profile",
    "session_memory": "context_share_session_memory",
    "observations": "context_share_history",
    "summary": "context_share_history",
    "memory": "context_share_memory",
    "knowledge": "context_share_knowledge",
    "notes": "context_share_notes",
    "recall": "context_share_recall",
    "recent": "context_share_recent",
}
FLOW_ORDER = (
    "user_profile",
    "session_memory",
    "observations",
    "summary",
    "recall",
    "recent",
    "memory",
    "knowledge",
    "notes",
)


@dataclass
class Budget:
    """Per block: the tokens planned from the shares, granted after the flow, and used."""

    max_tokens: int
    planned: dict[str, int]
    granted: dict[str, int]
    used: dict[str, int]

    def rows(self) -> dict[str, dict[str, int]]:
        return {
            name: {
                "planned": self.planned[name],
                "granted": self.granted[name],
                "used": self.used.get(name, 0),
            }
            for name in FLOW_ORDER
        }


def budget_plan(
    *, config, max_tokens: int, history: str, least: dict[str, int] | None = None
) -> dict[str, int]:
    """Return each block's planned tokens: its share of max_tokens, before any search.

    history names the block that holds the older history under the context strategy
    ("observations" or "summary"; the other plans nothing, and "" plans neither). least gives
    a block the tokens it must have whatever its share (the newest message, so that what was
    just said always comes along): the others' plans shrink in proportion to make room.
    """
    shares = {name: float(config[setting]) for name, setting in SHARE_SETTINGS.items()}
    for name in ("observations", "summary"):
        if name != history:
            shares[name] = 0.0
    total = sum(shares.values())
    if total <= 0:  # every share 0: the blocks share the budget by the flow alone
        return dict.fromkeys(SHARE_SETTINGS, 0)
    planned = {name: int(max_tokens * share / total) for name, share in shares.items()}
    for name, tokens in (least or {}).items():
        extra = min(tokens, max_tokens) - planned[name]
        others = max_tokens - planned[name]
        if extra <= 0 or others <= 0:
            continue
        scale = (others - extra) / others
        planned = {
            key: value if key == name else int(value * scale) for key, value in planned.items()
        }
        planned[name] += extra
    return planned


def budget_flow(*, planned: dict[str, int], needs: dict[str, int], max_tokens: int) -> Budget:
    """Grant each block min(need, planned), then the rest of max_tokens in FLOW_ORDER."""
    granted = {name: min(needs.get(name, 0), planned[name]) for name in FLOW_ORDER}
    spare = max_tokens - sum(granted.values())
    for name in FLOW_ORDER:
        more = min(spare, needs.get(name, 0) - granted[name])
        if more > 0:
            granted[name] += more
            spare -= more
    return Budget(max_tokens=max_tokens, planned=planned, granted=granted, used={})
