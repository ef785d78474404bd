"""Assemble the context an agent sends to its model before a call.

context_assemble() plans the budget as shares of max_tokens (budget.py), gathers each block's
candidates, grants each block its share plus what the others leave, fits each block's pieces
into its grant, renders the whole and stores a snapshot of what it gave (see snapshots.py).
"""

import hashlib
import json
from bisect import bisect_right
from dataclasses import dataclass, field

from django.utils import timezone

from apps.context.budget import FLOW_ORDER, Budget, budget_flow, budget_plan
from apps.context.history import observations_choose, seq_ranges
from apps.context.left_out import left_out_pieces
from apps.context.recent import newest_turn, recent_within
from apps.context.render import Piece, block_overhead, block_tokens, chat_message_tokens
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
from apps.episodic.selectors import entries_said_at
from apps.memconfig.selectors import config_effective
from apps.observations.selectors import summary_latest
from apps.retrieval.selectors import ContextHits, retrieve_for_context
from apps.search.query import query_terms
from apps.threads.models import Role
from apps.threads.selectors import message_latest, message_tail_within

# The most messages a context reads after what observations or a summary cover: far more than
# any budget keeps, while a thread whose memory is still catching up cannot make a request slow.
MAX_TAIL_MESSAGES = 1000
# Blocks whose pieces are ranked (best first) and fitted in that order.
RANKED_BLOCKS = ("user_profile", "session_memory", "summary", "memory", "knowledge", "notes")


@dataclass
class Stretch:
    """A recalled hit with the messages around it, in seq order (the hit among them)."""

    hit: Piece
    pieces: list[Piece]


@dataclass
class Candidates:
    """Everything a context could show, per block, before the budget is applied."""

    blocks: dict[str, list[Piece]]
    planned: dict[str, int] = field(default_factory=dict)  # each block's share (budget.py)
    recall: list[Stretch] = field(default_factory=list)
    warnings: list[dict] = field(default_factory=list)
    unread_observations: int = 0
    unread_messages: int = 0  # older unobserved messages that max_tokens could not hold


@dataclass
class Assembly:
    """What a context holds before it is rendered: the pieces of each block, in order, and
    the recalled matches it shows nowhere."""

    blocks: dict[str, list[Piece]]
    warnings: list[dict]
    budget: Budget
    recall_left_out: list[Stretch] = field(default_factory=list)


def context_assemble(*, agent, thread, query: str | None, max_tokens: int) -> dict:
    """Return the thread's context for the query within max_tokens, and store its snapshot.

    1. The query defaults to the thread's latest user message (the answer says which).
    2. Each block's share of max_tokens is planned from the settings (budget.py).
    3. Each block gathers its candidates: profile and session memory, observations or the
       summary, entries, knowledge and notes ranked for the query above the similarity floor,
       the messages after what observations or the summary cover, and the thread's past
       messages that match the query, each with the messages around it (recall).
    4. Each block is granted its share, or less when it needs less; what is left flows on.
    5. Each block fits its pieces into its grant; what is still left goes to the blocks that
       have more to show. Warnings say what each block left out.
    6. The snapshot keeps every piece's identity and hash; the answer is rendered from it.
    """
    now = timezone.now()
    config = config_effective(agent=agent)
    source = "request"
    if query is None:
        latest = message_latest(thread=thread, role=Role.USER)
        query = latest.content if latest else ""
        source = "latest_user_message" if latest else "none"
    history = {"observational": "observations", "compaction": "summary"}.get(
        config["context_strategy"], ""
    )
    candidates = _candidates(agent, thread, query, config, history, max_tokens)
    assembly = _fit(candidates, query, max_tokens, now)
    return snapshot_store(
        agent=agent,
        thread=thread,
        query=query,
        query_source=source,
        max_tokens=max_tokens,
        config_version=config_version(config.values),
        assembled_at=now,
        blocks=assembly.blocks,
        warnings=assembly.warnings,
        budget=assembly.budget.rows(),
        left_out=left_out_pieces(
            candidates=candidates.blocks,
            recall=assembly.recall_left_out,
            kept=assembly.blocks,
            unread_messages=candidates.unread_messages,
        ),
    )


def config_version(values: dict) -> str:
    """Return a short fingerprint of the effective settings a context was built with."""
    text = json.dumps(values, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _candidates(agent, thread, query: str, config, history: str, max_tokens: int) -> Candidates:
    found = Candidates(blocks={name: [] for name in FLOW_ORDER})
    blocks = found.blocks
    blocks["user_profile"] = profile_pieces(agent, thread)
    blocks["session_memory"] = session_memory_pieces(thread)
    covered = 0  # the last seq that observations or a summary stand for
    if history == "observations":
        blocks["observations"], found.unread_observations = observation_block(thread=thread)
        covered = blocks["observations"][-1].extra["last_seq"] if blocks["observations"] else 0
    elif history == "summary":
        summary = summary_latest(thread=thread)
        if summary is not None:
            blocks["summary"] = [summary_piece(summary)]
            covered = summary.covers_up_to_seq
    # The messages that no observation or summary holds yet are candidates, and never fewer
    # than the recent window; without either, just the window. Only the newest that fit
    # max_tokens are read: the budget could show no more.
    window = max(config["recent_window"], 0)
    after = max(0, thread.last_seq - window)
    if history:
        after = min(covered, after)
    recent = message_tail_within(
        thread=thread, after_seq=after, max_tokens=max_tokens, limit=MAX_TAIL_MESSAGES
    )
    blocks["recent"] = [message_piece(message) for message in recent]
    found.unread_messages = thread.last_seq - after - len(recent)
    # The shares are planned here, before anything is searched (the fitting uses the same
    # plan). Recall looks before what the recent block shows at its planned share: a message
    # the budget keeps out of the recent block, even one of the recent window, is recall's to
    # find. (The recent block may grow back over it with tokens the other blocks leave; what
    # it then shows is taken out of recall when the blocks are fitted.)
    found.planned = budget_plan(
        config=config,
        max_tokens=max_tokens,
        history=history,
        least={"recent": _size("recent", newest_turn(blocks["recent"]))},
    )
    shown = recent_within(blocks["recent"], found.planned["recent"])
    recall_before = shown[0].seq if shown else thread.last_seq + 1
    searched = _searched_blocks(query, config, recall_before)
    if not searched:  # nor is the query embedded
        return found
    hits = retrieve_for_context(
        agent=agent,
        thread=thread,
        query=query,
        top_k={
            "memory": config["episodic_auto_inject_top_k"] if "memory" in searched else 0,
            "knowledge": config["knowledge_top_k"] if "knowledge" in searched else 0,
            "notes": config["notes_top_k"] if "notes" in searched else 0,
        },
        # Hits are asked for beyond top_k, by half the recent window, so that enough remain
        # after the window's own are set aside (see _recall).
        recall_top_k=(
            config["semantic_recall_top_k"] + config["recent_window"] // 2
            if "recall" in searched
            else 0
        ),
        recall_range=(
            config["semantic_recall_range_before"],
            config["semantic_recall_range_after"],
        ),
    )
    if hits.embedding.failed:
        found.warnings.append(
            {
                "code": "vectors_unavailable",
                "message": "The embedder failed: memory, knowledge and recall are ranked by "
                "full-text and recency only.",
            }
        )
    entries = hits.blocks["memory"]
    said = entries_said_at(entry_ids=[hit.id for hit in entries]) if entries else {}
    for block in ("memory", "knowledge", "notes"):
        if block in searched:
            blocks[block] = [hit_piece(hit, said.get(str(hit.id))) for hit in hits.blocks[block]]
    if "recall" in searched:
        found.recall = _recall(hits, config, recall_before)
    return found


def _searched_blocks(query: str, config, recall_before: int) -> list[str]:
    """The blocks this context searches for, by the settings: those that can hold something.

    Recall looks only before what the recent block shows: when that is the whole thread there
    is nothing to recall.
    """
    if not query:
        return []
    wanted = {
        "memory": config["episodic_auto_inject"] and config["episodic_auto_inject_top_k"],
        "knowledge": config["knowledge_top_k"],
        "notes": config["notes_top_k"],
        "recall": config["semantic_recall_enabled"]
        and config["semantic_recall_top_k"]
        and recall_before > 1,
    }
    return [name for name, on in wanted.items() if on]


def _recall(found: ContextHits, config, recall_before: int) -> list[Stretch]:
    """Past messages of the thread before recall_before that match the query, best first,
    each with the messages around it (semantic_recall_range_before/after).

    Stretches may overlap; the fitting shows each message once. Hits are asked for beyond
    top_k, by half the recent window, so that enough remain after the window's own are set
    aside (asking for a whole window more measured the same on bench/context_recall.py,
    none more lost a point or two). The hits and the messages around them come in one query
    (search's message ranges); each message shows in one hit's range there, so the stretches
    are rebuilt from all the messages read.
    """
    top_k = config["semantic_recall_top_k"]
    before = config["semantic_recall_range_before"]
    after = config["semantic_recall_range_after"]
    hits = [hit for hit in found.recall if hit.seq < recall_before][:top_k]
    read = {
        message.seq: message
        for hit in found.recall
        for message in (hit, *hit.context.before, *hit.context.after)
    }
    stretches = []
    for hit in hits:
        pieces = [
            recall_piece(
                id=message.id,
                seq=seq,
                role=message.role,
                kind=message.kind,
                name=message.name,
                content=message.content,
                payload=message.payload,
                created_at=message.created_at,
                score=hit.score if seq == hit.seq else None,
                token_count=message.token_count,
            )
            for seq in range(hit.seq - before, hit.seq + after + 1)
            if (message := read.get(seq)) is not None and seq < recall_before
        ]
        stretches.append(Stretch(hit=next(p for p in pieces if p.seq == hit.seq), pieces=pieces))
    return stretches


def _fit(candidates: Candidates, query: str, max_tokens: int, now):
    """Grant each block its share, fit its pieces, then hand what is left to the blocks that
    have more to show (FLOW_ORDER)."""
    blocks = candidates.blocks
    for name, pieces in blocks.items():  # count every candidate's tokens once
        block_tokens(name, pieces, now)
    block_tokens("recall", [piece for s in candidates.recall for piece in s.pieces], now)
    needs = {name: _size(name, pieces) for name, pieces in blocks.items()}
    unique = {piece.seq: piece for stretch in candidates.recall for piece in stretch.pieces}
    needs["recall"] = _size("recall", list(unique.values()))  # stretches may overlap
    budget = budget_flow(planned=candidates.planned, needs=needs, max_tokens=max_tokens)
    terms = query_terms(query)
    kept: dict[str, list[Piece]] = {}

    def fit(name: str, grant: int) -> None:
        if name == "recent":
            kept[name] = recent_within(blocks[name], grant)
        elif name == "observations":
            kept[name] = observations_choose(
                blocks[name], grant=grant, overhead=block_overhead(name), terms=terms
            )
        elif name == "recall":
            kept[name] = _recalled(candidates.recall, grant, kept)
        else:
            kept[name] = _best(name, blocks[name], grant)
        budget.used[name] = _size(name, kept[name])

    # Recent first and observations next: recall leaves out what they already show.
    for name in ("recent", "observations", *RANKED_BLOCKS, "recall"):
        fit(name, budget.granted[name])
    # A block passes on what it did not use, whether it shows all it has or its next piece is
    # larger than what is left of its grant (an observation of 300 tokens in a grant of 100
    # showed nothing, and the 100 went unused while other blocks were cut); the blocks that
    # have more to show take it in FLOW_ORDER. Recall too, once it holds all it can: every
    # hit it has is shown, or left out because what remains is too large for what is left
    # (in a tool loop, a stretch of long tool results); its share is only passed on after it
    # has been fitted into it, so no block takes it from recall. So Σ granted never exceeds
    # max_tokens.
    for name in FLOW_ORDER:
        budget.granted[name] = budget.used[name]
    spare = max_tokens - sum(budget.granted.values())
    for name in FLOW_ORDER:
        if spare > 0 and budget.used[name] < needs[name]:
            fit(name, budget.granted[name] + spare)
            taken = max(0, budget.used[name] - budget.granted[name])
            budget.granted[name] += taken
            spare -= taken
    if kept["recent"]:  # the recent block may have grown back over recalled messages
        first = kept["recent"][0].seq
        kept["recall"] = [piece for piece in kept["recall"] if piece.seq < first]
        budget.used["recall"] = _size("recall", kept["recall"])
    recall_left_out = _recall_shown_nowhere(candidates.recall, kept)
    warnings = candidates.warnings + _left_out(candidates, kept, budget, recall_left_out)
    return Assembly(blocks=kept, warnings=warnings, budget=budget, recall_left_out=recall_left_out)


def _size(name: str, pieces: list[Piece]) -> int:
    if not pieces:
        return 0
    if name == "recent":
        return sum(chat_message_tokens(piece) for piece in pieces)
    return block_overhead(name) + sum(piece.tokens for piece in pieces)


def _best(name: str, pieces: list[Piece], grant: int) -> list[Piece]:
    """The pieces that fit grant, best first (a piece too large for what is left is passed)."""
    room = grant - block_overhead(name)
    kept = []
    for piece in pieces:
        if piece.tokens <= room:
            kept.append(piece)
            room -= piece.tokens
    return kept


def _recalled(stretches: list[Stretch], grant: int, kept: dict[str, list[Piece]]) -> list[Piece]:
    """The recalled messages that fit grant, without what the recent block shows or what a
    shown observation quotes word for word, each message once, in rank order of their hits:
    while less than half of the grant is taken, a hit's whole stretch when it fits, else the
    hit alone; past half, each hit alone, then the rest of their stretches, best first, as
    room allows. A hit inside a better hit's stretch still brings the rest of its own."""
    recent_start = kept["recent"][0].seq if kept["recent"] else None
    quoted = _Quotes(kept.get("observations", []))
    room = grant - block_overhead("recall")
    taken: dict[int, Piece] = {}

    def fresh(pieces):
        return [
            piece
            for piece in pieces
            if piece.seq not in taken
            and (recent_start is None or piece.seq < recent_start)
            and not quoted.holds(piece)
        ]

    def take(pieces) -> bool:
        nonlocal room
        size = sum(piece.tokens for piece in pieces)
        if not pieces or size > room:
            return False
        taken.update((piece.seq, piece) for piece in pieces)
        room -= size
        return True

    # The best hits bring their stretches until half the block is taken; after that a hit
    # comes alone, and the stretches of those lone hits follow, best first, in what is left.
    # Hits deep in the ranking still hold answers: on bench/context_recall.py's long threads
    # the answers the context missed lay at search ranks 22-102, where a stretch per hit had
    # spent the grant by the fifteenth. Over the set and its long threads (both histories,
    # 2k/4k/8k tokens, semantic_recall_top_k 60), this rule carried the evidence in 82.9 % of
    # the contexts, whole stretches first in 82.7 % and every hit alone first in 83.0 %; on
    # the long threads at 4k, observed, 80.3 % against 78.9 % and 80.3 % (search: 84 %). Of
    # the two best, this one keeps the best hits' neighbours at any budget.
    half = room / 2
    alone = []
    for stretch in stretches:
        if room > half and take(fresh(stretch.pieces)):
            continue
        if take(fresh([stretch.hit])):
            alone.append(stretch)
    for stretch in alone:
        take(fresh(stretch.pieces))
    return list(taken.values())


class _Quotes:
    """The shown observations, asked whether one of those covering a message's seq holds its
    words as they were said (compared with white space folded: an observation strips and
    joins what it quotes).

    Only the observations whose span covers the message are searched: searching the text of
    all shown observations (~50k tokens on bench/context.py's thread) for each recalled line
    took ~2 ms of a context.
    """

    def __init__(self, observations: list[Piece]):
        self.observations = sorted(observations, key=lambda piece: piece.seq)
        self.firsts = [piece.seq for piece in self.observations]
        # The furthest last_seq among the observations up to each index: spans may overlap.
        self.reach, furthest = [], 0
        for piece in self.observations:
            furthest = max(furthest, piece.extra["last_seq"])
            self.reach.append(furthest)
        self.folded: dict[int, str] = {}

    def holds(self, piece: Piece) -> bool:
        said = " ".join(piece.content.split(": ", 1)[-1].split())
        if len(said) < 20:
            return False
        index = bisect_right(self.firsts, piece.seq) - 1
        while index >= 0 and self.reach[index] >= piece.seq:
            observation = self.observations[index]
            if observation.extra["last_seq"] >= piece.seq and said in self._text(index):
                return True
            index -= 1
        return False

    def _text(self, index: int) -> str:
        if index not in self.folded:
            self.folded[index] = " ".join(self.observations[index].content.split())
        return self.folded[index]


def _recall_shown_nowhere(stretches: list[Stretch], kept: dict[str, list[Piece]]) -> list:
    """The recalled matches whose message the context shows nowhere: not in the recall block,
    nor in the recent block, nor quoted by a shown observation (recall leaves out what those
    two show, so such a match is in the context, not left out of it)."""
    shown = {piece.seq for piece in (*kept["recall"], *kept["recent"])}
    quoted = _Quotes(kept.get("observations", []))
    return [s for s in stretches if s.hit.seq not in shown and not quoted.holds(s.hit)]


def _left_out(
    candidates: Candidates, kept: dict[str, list[Piece]], budget: Budget, recall_left_out: list
) -> list:
    """A warning per block that could not show all its candidates, saying what it was given."""
    warnings = []
    for name in FLOW_ORDER:
        if name == "recall":
            count = len(recall_left_out)
            what = f"{count} of {len(candidates.recall)} recalled match(es)"
        else:
            shown_ids = {id(piece) for piece in kept[name]}
            left = [p for p in candidates.blocks[name] if id(p) not in shown_ids]
            count = len(left)
            what = f"{count} item(s) of {name}"
            if name == "observations" and left:
                what += f" (messages {seq_ranges(left)})"
        if name == "observations" and candidates.unread_observations:
            count += candidates.unread_observations
            what += f"; {candidates.unread_observations} older observation(s) not read"
        if name == "recent" and candidates.unread_messages > 0:
            count += candidates.unread_messages
            what = f"{count} older message(s) no observation holds yet"
        if count:
            warnings.append(
                {
                    "code": "trimmed",
                    "block": name,
                    "message": f"{what} left out: the block was granted "
                    f"{budget.granted[name]} of max_tokens ({budget.max_tokens}), "
                    f"{budget.planned[name]} planned.",
                }
            )
    return warnings
