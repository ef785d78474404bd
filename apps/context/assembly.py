"""Assemble the context an agent sends to its model before a call.

context_assemble() picks what each block holds, trims the whole to max_tokens by a fixed
priority, renders it, and stores a snapshot of what it gave (see snapshots.py).
"""

import hashlib
import json
from dataclasses import dataclass

from django.utils import timezone

from apps.context.render import Piece, block_tokens
from apps.context.snapshots import (
    hit_piece,
    message_piece,
    observation_block,
    profile_pieces,
    recall_piece,
    session_memory_pieces,
    snapshot_store,
    summary_piece,
)
from apps.knowledge.selectors import knowledge_base_list
from apps.memconfig.selectors import config_effective
from apps.observations.selectors import summary_latest
from apps.search.models import ItemKind
from apps.search.selectors import query_embed, search_each_for_agent, search_for_agent
from apps.threads.models import Role
from apps.threads.selectors import message_latest, message_tail

# Trimming takes pieces from these blocks first, and from the recent window and the user
# profile last: what the agent was told about the user and what was just said matter most.
# The oldest observations go before entries and knowledge: those are few (top_k each) and
# chosen for this query, while a long thread's observations alone can fill any budget.
TRIM_ORDER = (
    "recall",
    "observations",
    "notes",
    "knowledge",
    "memory",
    "summary",
    "session_memory",
    "recent",
    "user_profile",
)
# Blocks trimmed from their start (oldest first); the others lose their lowest-ranked pieces.
TRIM_OLDEST_FIRST = {"observations", "recent"}
# The most messages a context reads after what observations or a summary cover: far more than
# any budget keeps, while a thread whose memory is still catching up cannot make a request slow.
MAX_TAIL_MESSAGES = 1000


@dataclass
class Assembly:
    """What a context holds before it is rendered: the pieces of each block, in order."""

    blocks: dict[str, list[Piece]]
    warnings: list[dict]


def context_assemble(*, agent, thread, query: str | None, max_tokens: int) -> dict:
    """Return the thread's context for the query within max_tokens, and store its snapshot.

    1. The query defaults to the thread's latest user message.
    2. Each block takes its pieces: profile and session memory, observations or the summary,
       entries, knowledge and notes ranked for the query, recalled messages outside the recent
       window, then the recent messages after what observations or the summary cover.
    3. Over max_tokens, pieces leave by TRIM_ORDER; warnings say what was left out.
    4. The snapshot keeps every piece's identity and hash; the answer is rendered from it.
    """
    now = timezone.now()
    config = config_effective(agent=agent)
    if query is None:
        latest = message_latest(thread=thread, role=Role.USER)
        query = latest.content if latest else ""
    assembly = _collect(agent, thread, query, config, max_tokens, now)
    _trim(assembly, max_tokens, now)
    return snapshot_store(
        agent=agent,
        thread=thread,
        query=query,
        max_tokens=max_tokens,
        config_version=config_version(config.values),
        assembled_at=now,
        blocks=assembly.blocks,
        warnings=assembly.warnings,
    )


def config_version(values: dict) -> str:
    """Return a short fingerprint of the effective settings a context was built with."""
    text = json.dumps(values, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _collect(agent, thread, query: str, config, max_tokens: int, now) -> Assembly:
    blocks: dict[str, list[Piece]] = {name: [] for name in TRIM_ORDER}
    warnings: list[dict] = []
    blocks["user_profile"] = profile_pieces(agent, thread)
    blocks["session_memory"] = session_memory_pieces(thread)
    strategy = config["context_strategy"]
    covered = 0  # the last seq that observations or a summary stand for
    if strategy == "observational":
        blocks["observations"], unread = observation_block(thread=thread, max_tokens=max_tokens)
        covered = blocks["observations"][-1].extra["last_seq"] if blocks["observations"] else 0
        if unread:
            warnings.append(
                {
                    "code": "trimmed",
                    "block": "observations",
                    "message": f"{unread} older observation(s) left out to fit max_tokens "
                    f"({max_tokens}).",
                }
            )
    elif strategy == "compaction":
        summary = summary_latest(thread=thread)
        if summary is not None:
            blocks["summary"] = [summary_piece(summary)]
            covered = summary.covers_up_to_seq
    # Every message that no observation or summary holds yet comes along (the budget trims the
    # oldest first), and never fewer than the recent window; without either, just the window.
    window = max(config["recent_window"], 0)
    if strategy == "none":
        recent = message_tail(thread=thread, after_seq=0, limit=window)
    else:
        recent = message_tail(thread=thread, after_seq=covered, limit=MAX_TAIL_MESSAGES)
        if len(recent) < window:
            recent = message_tail(thread=thread, after_seq=0, limit=window)
    window_start = recent[0].seq if recent else thread.last_seq + 1
    blocks["recent"] = [message_piece(message) for message in recent]
    searched = _searched_blocks(query, config, window_start)
    if not searched:  # nor is the query embedded
        return Assembly(blocks=blocks, warnings=warnings)
    if _no_room_for("memory", blocks, max_tokens, now):
        warnings += [_not_searched(name, max_tokens) for name in searched]
        return Assembly(blocks=blocks, warnings=warnings)
    embedding = query_embed(project_id=agent.project_id, query=query)
    if embedding.failed:
        warnings.append(
            {
                "code": "vectors_unavailable",
                "message": "The embedder failed: memory, knowledge and recall are ranked by "
                "full-text and recency only.",
            }
        )
    blocks.update(_ranked(agent, thread, query, config, embedding, searched))
    if "recall" in searched:
        if _no_room_for("recall", blocks, max_tokens, now):
            warnings.append(_not_searched("recall", max_tokens))
        else:
            blocks["recall"] = _recall(agent, thread, query, config, embedding, window_start)
    return Assembly(blocks=blocks, warnings=warnings)


def _searched_blocks(query: str, config, window_start: int) -> list[str]:
    """The blocks this context would search for, by the settings: those that can hold something.

    Recall looks only before the recent window: when the window holds the whole thread there is
    nothing to recall (and nothing to warn about leaving out).
    """
    if not query:
        return []
    wanted = {
        "memory": config["episodic_auto_inject"] and config["episodic_auto_inject_top_k"],
        "knowledge": config["knowledge_top_k"],
        "notes": config["notes_top_k"],
        "recall": config["semantic_recall_enabled"]
        and config["semantic_recall_top_k"]
        and window_start > 1,
    }
    return [name for name, on in wanted.items() if on]


def _no_room_for(name: str, blocks: dict[str, list[Piece]], max_tokens: int, now) -> bool:
    """Whether the blocks that trimming reaches after this one already take all of max_tokens.

    Then trimming would leave every piece of it out, so it is not searched for. A long thread's
    observations alone can fill the budget, and recall, trimmed first, would be thrown away
    whole: searching it took half of such a context's time (bench/context.py, semantic recall).
    """
    later = TRIM_ORDER[TRIM_ORDER.index(name) + 1 :]
    return sum(block_tokens(later_name, blocks[later_name], now) for later_name in later) >= (
        max_tokens
    )


def _not_searched(name: str, max_tokens: int) -> dict:
    return {
        "code": "trimmed",
        "block": name,
        "message": f"{name} not searched: the other blocks take all of max_tokens ({max_tokens}).",
    }


def _ranked(agent, thread, query, config, embedding, searched) -> dict[str, list[Piece]]:
    """The blocks ranked for the query (those of `searched`), each with its own top_k setting:

    - memory: approved entries of this agent and end user (episodic_auto_inject_top_k, when
      episodic_auto_inject is on);
    - knowledge: the project's knowledge chunks (knowledge_top_k);
    - notes: the agent's own notes and its project's shared ones (notes_top_k; a note is a
      whole markdown page, so it is small by default, 3).
    """
    top_k = {}
    if "memory" in searched:
        top_k[ItemKind.ENTRY] = config["episodic_auto_inject_top_k"]
    bases = ()
    if "knowledge" in searched:
        bases = tuple(knowledge_base_list(project=agent.project).values_list("id", flat=True))
        if bases:
            top_k[ItemKind.CHUNK] = config["knowledge_top_k"]
    if "notes" in searched:
        top_k[ItemKind.NOTE] = config["notes_top_k"]
    if not top_k:
        return {}
    found = search_each_for_agent(
        agent=agent,
        query=query,
        top_k=top_k,
        resource_id=thread.resource_id,
        without_resource=thread.resource_id is None,
        knowledge_base_ids=bases,
        embedding=embedding,
    )
    return {
        block: [hit_piece(hit) for hit in found.get(kind, [])]
        for block, kind in (
            ("memory", ItemKind.ENTRY),
            ("knowledge", ItemKind.CHUNK),
            ("notes", ItemKind.NOTE),
        )
    }


def _recall(agent, thread, query, config, embedding, window_start: int) -> list[Piece]:
    """Past messages of the thread outside the recent window, each with the ones around it.

    The recent window's own messages are left out, as hits and as range members: the model
    sees them already. Hits are asked for beyond top_k so that enough remain after that.
    """
    top_k = config["semantic_recall_top_k"]
    found = search_for_agent(
        agent=agent,
        query=query,
        kinds=[ItemKind.MESSAGE],
        thread_id=thread.id,
        top_k=top_k + config["recent_window"],
        message_range=(
            config["semantic_recall_range_before"],
            config["semantic_recall_range_after"],
        ),
        embedding=embedding,
    )
    pieces, shown = [], set()
    hits = [hit for hit in found.hits if hit.seq < window_start][:top_k]
    for hit in hits:
        stretch = [*hit.context.before, hit, *hit.context.after]
        for message in stretch:
            if message.seq >= window_start or message.seq in shown:
                continue
            shown.add(message.seq)
            pieces.append(
                recall_piece(
                    id=message.id,
                    seq=message.seq,
                    role=message.role,
                    kind=message.kind,
                    name=message.name,
                    content=message.content,
                    payload=message.payload,
                    score=hit.score if message is hit else None,
                )
            )
    return pieces


def _trim(assembly: Assembly, max_tokens: int, now) -> None:
    """Leave pieces out by TRIM_ORDER until the context fits max_tokens."""
    blocks = assembly.blocks
    sizes = {name: block_tokens(name, pieces, now) for name, pieces in blocks.items()}
    total = sum(sizes.values())
    for name in TRIM_ORDER:
        pieces = blocks[name]
        if total <= max_tokens or not pieces:
            continue
        # Drop pieces from the trimmed end, keeping a running count, until the rest fits.
        order = pieces if name in TRIM_OLDEST_FIRST else pieces[::-1]
        dropped, size = 0, sizes[name]
        while total > max_tokens and dropped < len(order):
            piece_tokens = order[dropped].tokens
            dropped += 1
            left = size - piece_tokens if dropped < len(order) else 0
            total -= size - left
            size = left
        kept = order[dropped:]
        blocks[name] = kept if name in TRIM_OLDEST_FIRST else kept[::-1]
        assembly.warnings.append(
            {
                "code": "trimmed",
                "block": name,
                "message": f"{dropped} item(s) of {name} left out to fit max_tokens "
                f"({max_tokens}).",
            }
        )
