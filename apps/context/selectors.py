"""Reads of context snapshots for the operator console, which sees every project's threads."""

from datetime import timedelta

from apps.context.models import ContextSnapshot
from apps.context.snapshots import manifest_items
from apps.core.errors import NotFound
from apps.retrieval.selectors import items_shown
from apps.search.models import ItemKind
from apps.threads.selectors import message_page

# Timestamps come from the clocks of several workers: the time bounds below only narrow the
# rows read, and this much slack keeps a skewed clock from dropping one.
CLOCK_SLACK = timedelta(seconds=5)


def snapshot_for_operator(*, context_id) -> ContextSnapshot:
    """Return a snapshot by id, whatever its agent; raise NotFound for an unknown id."""
    snapshot = (
        ContextSnapshot.objects.select_related(
            "thread__resource", "thread__agent__project", "agent"
        )
        .filter(pk=context_id)
        .first()
    )
    if snapshot is None:
        raise NotFound("No such context.")
    return snapshot


def snapshot_previous(*, snapshot: ContextSnapshot) -> ContextSnapshot | None:
    """Return the snapshot stored just before this one for the same thread (ids are UUIDv7)."""
    return (
        ContextSnapshot.objects.filter(thread_id=snapshot.thread_id, pk__lt=snapshot.pk)
        .order_by("-pk")
        .first()
    )


def snapshots_by_turn(*, thread, messages) -> dict[int, list[ContextSnapshot]]:
    """Return the contexts given before each of these messages (consecutive seqs), by seq.

    A context precedes the turn that the agent took with it:
    1. The first message after the newest message of its recent block. That block ends with
       the thread's newest message when the context was assembled (the window and the budget
       drop the oldest messages first), so the next message is what the agent did next.
    2. With an empty recent block (a window of 0 and nothing unobserved), the first message
       stored after the context was assembled.
    3. When no message follows yet, the thread's last message: the context is the newest.
    Only contexts assembled between the message before the first one given and the last one
    given can precede one of them, so only those are read.
    """
    if not messages:
        return {}
    first, last = messages[0], messages[-1]
    before, _ = message_page(thread=thread, after_seq=None, before_seq=first.seq, limit=1)
    snapshots = ContextSnapshot.objects.filter(thread=thread)
    if before:
        snapshots = snapshots.filter(assembled_at__gte=before[0].created_at - CLOCK_SLACK)
    if last.seq < thread.last_seq:
        snapshots = snapshots.filter(assembled_at__lte=last.created_at + CLOCK_SLACK)
    turns: dict[int, list[ContextSnapshot]] = {}
    for snapshot in snapshots.order_by("pk"):
        seq = _turn(snapshot, messages, before[0] if before else None, thread.last_seq)
        if seq is not None and first.seq <= seq <= last.seq:
            turns.setdefault(seq, []).append(snapshot)
    return turns


def _turn(snapshot, messages, before, last_seq: int) -> int | None:
    recent = [
        item["seq"]
        for block in snapshot.manifest["blocks"]
        if block["name"] == "recent"
        for item in manifest_items(block)
        if item["type"] == "message" and item["seq"] is not None
    ]
    if recent:
        return min(max(recent) + 1, last_seq)
    previous = before
    for message in messages:
        if message.created_at > snapshot.assembled_at:
            # Only a message whose predecessor came before the context is the first after it.
            if previous is None or previous.created_at <= snapshot.assembled_at:
                return message.seq
            return None
        previous = message
    return last_seq if messages[-1].seq == last_seq else None


def chunk_documents(*, chunk_ids) -> dict[str, str]:
    """Return the document id of each of these chunks that is still indexed, by chunk id."""
    hits = items_shown(kind=ItemKind.CHUNK, ids=chunk_ids)
    return {key: hit.metadata["document_id"] for key, hit in hits.items()}
