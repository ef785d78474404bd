"""Context snapshots: store what a context gave, re-render it, and compare two of them.

A snapshot keeps each piece's identity and a hash of what it showed, never the text: re-reading
the rows renders the same context again, and a piece whose row changed or went since is flagged.
"""

from django.db import IntegrityError

from apps.context.left_out import manifest_left_out
from apps.context.models import ContextSnapshot
from apps.context.render import (
    BLOCKS,
    Piece,
    block_text,
    block_tokens,
    chat_message,
    message_head,
    message_text,
    observation_kept,
    observation_piece,
    piece_hash,
    recall_line_tokens,
)
from apps.core.database import record_transaction
from apps.core.errors import NotFound
from apps.episodic.selectors import entries_said_at
from apps.observations.selectors import (
    observation_texts,
    observations_active_marker,
    observations_active_sizes,
    observations_by_id,
    summaries_by_id,
)
from apps.profiles.selectors import profile_get, session_memory_get
from apps.retrieval.selectors import items_shown
from apps.search.models import ItemKind
from apps.threads.selectors import messages_by_id, thread_exists


def snapshot_store(
    *,
    agent,
    thread,
    query: str,
    query_source: str,
    max_tokens: int,
    config_version: str,
    assembled_at,
    blocks: dict[str, list[Piece]],
    warnings: list[dict],
    budget: dict[str, dict[str, int]],
    left_out: dict | None = None,
) -> dict:
    """Store the manifest of a context (per block, each piece's type, id, seq, score and hash;
    where the query came from; each block's planned, granted and used tokens; what the budget
    left out, see left_out_pieces) and return the context's answer."""
    items = {
        name: [
            {"type": piece.type, "id": piece.id, "seq": piece.seq, "score": piece.score}
            for piece in blocks.get(name, [])
        ]
        for name in shown_blocks(blocks)
    }
    manifest_blocks = [manifest_block(name, blocks.get(name, [])) for name in items]
    snapshot = ContextSnapshot(
        thread=thread,
        agent=agent,
        query=query,
        max_tokens=max_tokens,
        tokens=0,
        config_version=config_version,
        assembled_at=assembled_at,
        manifest={
            "blocks": manifest_blocks,
            "warnings": warnings,
            "query_source": query_source,
            "budget": budget,
            **({"left_out": manifest_left_out(left_out)} if left_out is not None else {}),
        },
    )
    # A new context's pieces are the manifest's: its items need no comparison with the rows.
    rendered = _rendered(snapshot, blocks, items)
    snapshot.tokens = rendered["tokens"]
    # A snapshot records what an agent was sent; a crash may lose the last few, not the
    # thread's messages (core/database.py).
    try:
        with record_transaction():
            snapshot.save()
    except IntegrityError:
        # Its reference to the thread failed at the commit: the thread was deleted after the
        # context read it. The transaction rolled back, so nothing was stored.
        if thread_exists(thread_id=thread.id):
            raise
        raise NotFound(
            "The thread no longer exists: it was deleted while its context was assembled, and "
            "no context was stored."
        ) from None
    return _answer(snapshot, rendered)


def manifest_block(name: str, pieces: list[Piece]) -> dict:
    """Return a block as the manifest stores it: its items column by column.

    {"name", "type", "id": [...], "seq": [...], "score": [...], "hash": [...]}, "type" once when
    the block holds one type of piece (every block does today), else a column too. One dict per
    item made a long thread's manifest ~40 KB for ~300 observations, and storing it took ~2 of
    a context's ~26 ms on PostgreSQL (parsing the jsonb, TOAST); in columns it is ~30 % smaller
    and stored ~40 % faster (bench/context.py's manifests, INSERT timed alone). Snapshots stored
    as a list of dicts ("items") are read as they are: manifest_items() takes both.
    """
    types = list(dict.fromkeys(piece.type for piece in pieces))
    return {
        "name": name,
        "type": types[0] if len(types) == 1 else [piece.type for piece in pieces],
        "id": [piece.id for piece in pieces],
        "seq": [piece.seq for piece in pieces],
        "score": [piece.score for piece in pieces],
        "hash": [piece_hash(piece) for piece in pieces],
    }


def manifest_items(block: dict) -> list[dict]:
    """Return a manifest block's items as dicts: type, id, seq, score, hash."""
    if "items" in block:
        return block["items"]
    count = len(block["id"])
    types = block["type"] if isinstance(block["type"], list) else [block["type"]] * count
    columns = zip(types, block["id"], block["seq"], block["score"], block["hash"], strict=True)
    return [
        {"type": type_, "id": id_, "seq": seq, "score": score, "hash": hash_}
        for type_, id_, seq, score, hash_ in columns
    ]


def shown_blocks(blocks: dict[str, list[Piece]]) -> list[str]:
    """Return the names of the blocks a context answer lists, in their fixed order.

    A thread's older history comes as observations or as a summary, never both: the summary
    block is listed only when it holds something.
    """
    names = [name for name, _ in BLOCKS]
    if blocks.get("summary"):
        names.remove("observations")
    else:
        names.remove("summary")
    return names


def _answer(snapshot: ContextSnapshot, rendered: dict) -> dict:
    thread = snapshot.thread
    return {
        "context_id": str(snapshot.id),
        "thread_id": str(thread.id),
        # resource_id is set, so the resource is too: mypy does not tie the two.
        "resource_id": thread.resource.external_id if thread.resource_id else None,  # type: ignore[union-attr]
        "config_version": snapshot.config_version,
        "query": snapshot.query,
        # Contexts stored before the budget was planned say neither.
        "query_source": snapshot.manifest.get("query_source"),
        "max_tokens": snapshot.max_tokens,
        "tokens": rendered["tokens"],
        "created_at": snapshot.assembled_at,
        "blocks": rendered["blocks"],
        "system_prompt": rendered["system_prompt"],
        "messages": rendered["messages"],
        "warnings": snapshot.manifest["warnings"],
    }


def _rendered(
    snapshot: ContextSnapshot, blocks: dict[str, list[Piece]], items: dict[str, list[dict]]
) -> dict:
    """Render the blocks the items list (in the answer's order) from their pieces."""
    now = snapshot.assembled_at
    budget = snapshot.manifest.get("budget", {})
    out, texts, messages, total = [], [], [], 0
    for name in items:
        pieces = blocks.get(name, [])
        # Token counts are additive across lines, so a block's count is its pieces' (each
        # counted once, during trimming for a new context) plus its tags.
        tokens = block_tokens(name, pieces, now)
        if name == "recent":
            messages = [chat_message(piece) for piece in pieces]
            text = ""
        else:
            text = block_text(name, pieces, now)
            if text:
                texts.append(text)
        total += tokens
        out.append(
            {
                "name": name,
                "tokens": tokens,
                "planned_tokens": budget.get(name, {}).get("planned"),
                "granted_tokens": budget.get(name, {}).get("granted"),
                "text": text,
                "items": items[name],
            }
        )
    return {
        "blocks": out,
        "system_prompt": "\n\n".join(texts),
        "messages": messages,
        "tokens": total,
    }


def _items(stored: list[dict], pieces: list[Piece]) -> list[dict]:
    """Return a block's items as the manifest lists them, flagging what changed or went since."""
    current = {(p.type, p.id): piece_hash(p) for p in pieces}
    items = []
    for item in stored:
        now = current.get((item["type"], item["id"]))
        flags = {"deleted": True} if now is None else {}
        if now is not None and now != item["hash"]:
            flags = {"changed": True}
        items.append({key: item[key] for key in ("type", "id", "seq", "score")} | flags)
    return items


def snapshot_get(*, agent, context_id) -> ContextSnapshot:
    snapshot = (
        ContextSnapshot.objects.select_related("thread__resource", "agent")
        .filter(agent=agent, pk=context_id)
        .first()
    )
    if snapshot is None:
        raise NotFound("No such context.")
    return snapshot


def snapshot_list(*, thread):
    return ContextSnapshot.objects.filter(thread=thread)


def snapshot_replay(*, snapshot: ContextSnapshot) -> dict:
    """Re-render a stored context from the rows it named, flagging what changed since."""
    listed = {block["name"]: manifest_items(block) for block in snapshot.manifest["blocks"]}
    blocks = _reload(snapshot, listed)
    items = {name: _items(stored, blocks.get(name, [])) for name, stored in listed.items()}
    return _answer(snapshot, _rendered(snapshot, blocks, items))


def _reload(snapshot: ContextSnapshot, listed: dict[str, list[dict]]) -> dict[str, list[Piece]]:
    """Load each listed item's row as a piece again, block by block (the manifest's items by
    block name); a row that is gone is left out."""
    wanted: dict[str, set[str]] = {}
    for stored in listed.values():
        for item in stored:
            wanted.setdefault(item["type"], set()).add(item["id"])
    loaded: dict[str, dict[str, Piece]] = {
        kind: LOADERS[kind](snapshot, ids) for kind, ids in wanted.items()
    }
    blocks = {}
    for name, stored in listed.items():
        pieces = []
        for item in stored:
            piece = loaded[item["type"]].get(item["id"])
            if piece is None:
                continue
            if name == "recall":  # a recalled message shows as one line of text
                piece = recall_piece(
                    id=piece.id,
                    seq=piece.seq,
                    content=piece.content,
                    created_at=piece.created_at,
                    **piece.extra,
                )
            piece.score = item["score"]
            pieces.append(piece)
        blocks[name] = pieces
    return blocks


def message_piece(message) -> Piece:
    """A message of the thread as the recent block holds it."""
    return Piece(
        type="message",
        id=str(message.id),
        content=message.content,
        seq=message.seq,
        created_at=message.created_at,
        tokens=getattr(message, "token_count", None),  # as the append counted it
        extra={
            "role": message.role,
            "kind": message.kind,
            "name": message.name,
            "payload": message.payload,
        },
    )


def recall_piece(
    *, id, seq, role, kind, name, content, payload, created_at, score=None, token_count=None
) -> Piece:
    """A recalled message as the recall block holds it: one line of text, with its date.

    token_count is the message's stored count, when the caller read it: the line's tokens are
    then known without counting them again (render.recall_line_tokens)."""
    text = message_text(role, kind, name, content, payload)
    piece = Piece(
        type="message", id=str(id), content=text, seq=seq, score=score, created_at=created_at
    )
    if token_count is not None:
        recall_line_tokens(piece, message_head(role, kind, name), token_count)
    return piece


def _messages(snapshot, ids) -> dict[str, Piece]:
    found = messages_by_id(thread=snapshot.thread, ids=ids)
    return {key: message_piece(message) for key, message in found.items()}


def hit_piece(hit, said_at=None) -> Piece:
    """An entry, a knowledge chunk or a note found by search, as its block holds it.

    An entry is dated by when its source message was said (said_at), when it has one: the
    model reads its age, and an entry consolidated today from a message of March is as old
    as the message. Otherwise by when it was written."""
    if hit.type == "knowledge":
        return Piece(type="chunk", id=str(hit.id), content=hit.content, score=hit.score)
    if hit.type == "note":
        return Piece(
            type="note",
            id=str(hit.id),
            content=hit.content,
            score=hit.score,
            extra={"path": hit.metadata["path"], "version": hit.metadata["version"]},
        )
    return Piece(
        type="entry",
        id=str(hit.id),
        content=hit.content,
        score=hit.score,
        created_at=said_at or hit.created_at,
        extra={"status": hit.metadata["status"]},
    )


def _entries(snapshot, ids) -> dict[str, Piece]:
    found = items_shown(kind=ItemKind.ENTRY, ids=ids)
    said = entries_said_at(entry_ids=list(found)) if found else {}
    return {key: hit_piece(hit, said.get(key)) for key, hit in found.items()}


def _chunks(snapshot, ids) -> dict[str, Piece]:
    found = items_shown(kind=ItemKind.CHUNK, ids=ids)
    return {key: hit_piece(hit) for key, hit in found.items()}


def _notes(snapshot, ids) -> dict[str, Piece]:
    found = items_shown(kind=ItemKind.NOTE, ids=ids)
    return {key: hit_piece(hit) for key, hit in found.items()}


def profile_pieces(agent, thread) -> list[Piece]:
    """The agent's profile of the thread's end user, when it has written one."""
    if thread.resource_id is None:
        return []
    profile = profile_get(agent=agent, resource=thread.resource)
    if profile is None or not profile.content.strip():
        return []
    return [Piece(type="profile", id=str(profile.id), content=profile.content)]


def session_memory_pieces(thread) -> list[Piece]:
    """The thread's session memory as one piece: objective, decisions, state, follow-ups."""
    memory = session_memory_get(thread=thread)
    if memory is None:
        return []
    lines = []
    if memory.objective:
        lines.append(f"Objective: {memory.objective}")
    if memory.decisions:
        lines += ["Decisions:", *[f"- {decision}" for decision in memory.decisions]]
    if memory.state:
        lines.append(f"State: {memory.state}")
    if memory.follow_ups:
        lines += ["Follow-ups:", *[f"- {follow_up}" for follow_up in memory.follow_ups]]
    if not lines:
        return []
    return [Piece(type="session_memory", id=str(memory.id), content="\n".join(lines))]


def observation_pieces(observations) -> list[Piece]:
    return [
        observation_piece(
            id=observation.id,
            first_seq=observation.first_seq,
            last_seq=observation.last_seq,
            content=observation.content,
            tokens=observation.tokens,
        )
        for observation in observations
    ]


# The most active observations a context chooses from: a reflector threshold of millions of
# tokens can leave tens of thousands, and reading all their sizes on every request would cost
# more than the choice is worth. Older ones than these are left out (and said to be).
OBSERVATION_CANDIDATES = 2000


# The observations block of each thread this process assembled a context for, with what marks
# the active observations it was read from (observations_active_marker). A long thread's
# context reads a few hundred observation rows on every request; reading them and building
# their pieces took ~4 of a ~25 ms context on bench/context.py's thread (500 observations,
# SQLite, in-process), the marker's one aggregate a tenth of that. Pieces of observations are
# never changed by assembly. Dropped whole when full, as render.py's observation lines are.
OBSERVATION_BLOCKS = 1000
_blocks: dict = {}  # thread id -> (marker, pieces, unread)


def observation_block(*, thread) -> tuple[list[Piece], int]:
    """The thread's newest active observations (OBSERVATION_CANDIDATES at most) as pieces, in
    time order, and how many older ones were not read. Read again only when the thread's
    active observations changed since this process last read them, and then only the text of
    observations it has not shown before."""
    marker = observations_active_marker(thread=thread)
    held = _blocks.get(thread.id)
    if held is not None and held[0] == marker:
        return list(held[1]), held[2]
    rows, unread = observations_active_sizes(thread=thread, limit=OBSERVATION_CANDIDATES)
    kept = {row.id: line for row in rows if (line := observation_kept(row.id)) is not None}
    missing = [row.id for row in rows if row.id not in kept]
    texts = observation_texts(thread=thread, ids=missing) if missing else {}
    pieces = []
    for row in rows:
        if row.id not in kept and row.id not in texts:
            continue  # deleted meanwhile
        pieces.append(
            observation_piece(
                id=row.id,
                first_seq=row.first_seq,
                last_seq=row.last_seq,
                tokens=row.tokens,
                content=texts.get(row.id),
                kept=kept.get(row.id),
            )
        )
    if len(_blocks) >= OBSERVATION_BLOCKS:
        _blocks.clear()
    _blocks[thread.id] = (marker, tuple(pieces), unread)
    return pieces, unread


def summary_piece(summary) -> Piece:
    return Piece(
        type="summary",
        id=str(summary.id),
        content=summary.content,
        seq=summary.covers_up_to_seq,
        content_tokens=summary.tokens,
    )


def _profiles(snapshot, ids) -> dict[str, Piece]:
    agent = snapshot.agent
    return {p.id: p for p in profile_pieces(agent, snapshot.thread) if p.id in ids}


def _session_memories(snapshot, ids) -> dict[str, Piece]:
    return {p.id: p for p in session_memory_pieces(snapshot.thread) if p.id in ids}


def _observations(snapshot, ids) -> dict[str, Piece]:
    found = observations_by_id(thread=snapshot.thread, ids=ids)
    return {p.id: p for p in observation_pieces(found.values())}


def _summaries(snapshot, ids) -> dict[str, Piece]:
    found = summaries_by_id(thread=snapshot.thread, ids=ids)
    return {key: summary_piece(summary) for key, summary in found.items()}


# How each type of piece is read back: loader(snapshot, ids) -> {id: Piece}.
LOADERS = {
    "message": _messages,
    "entry": _entries,
    "chunk": _chunks,
    "note": _notes,
    "profile": _profiles,
    "session_memory": _session_memories,
    "observation": _observations,
    "summary": _summaries,
}


def snapshot_diff(*, first: ContextSnapshot, second: ContextSnapshot) -> dict:
    """Return the items that entered, left or changed from the first context to the second."""

    def index(snapshot):
        return {
            (block["name"], item["type"], item["id"]): item
            for block in snapshot.manifest["blocks"]
            for item in manifest_items(block)
        }

    before, after = index(first), index(second)

    def listed(keys, source):
        return [
            {"block": key[0], "type": key[1], "id": key[2], "seq": source[key]["seq"]}
            for key in sorted(keys, key=lambda k: (_order(k[0]), source[k]["seq"] or 0, k[2]))
        ]

    changed = {
        key for key in before.keys() & after.keys() if before[key]["hash"] != after[key]["hash"]
    }
    return {
        "from": str(first.id),
        "to": str(second.id),
        "entered": listed(after.keys() - before.keys(), after),
        "left": listed(before.keys() - after.keys(), before),
        "changed": listed(changed, after),
    }


def _order(block: str) -> int:
    return [name for name, _ in BLOCKS].index(block)
