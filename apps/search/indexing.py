"""Writes to the search index. Owning apps call these in the same transaction as their rows."""

from django.db import transaction
from django.db.models import Q

from apps.search.backends import backend
from apps.search.backends.common import insert_message_items
from apps.search.models import ItemEmbedding, ItemKind, SearchItem

# Tool payloads are indexed as text too, but only this much of them.
PAYLOAD_TEXT_CHARS = 2000


def index_messages(*, thread, messages) -> None:
    """Index newly stored messages of the thread (consecutive seqs), and queue their embedding."""
    if not messages:
        return
    project_id = thread.agent.project_id
    insert_message_items(
        thread=thread,
        project_id=project_id,
        after_seq=messages[0].seq - 1,
        payload_chars=PAYLOAD_TEXT_CHARS,
    )
    _queue_embedding(project_id)


def index_entry(*, entry, visible: bool) -> SearchItem:
    item = SearchItem.objects.create(
        kind=ItemKind.ENTRY,
        project_id=entry.agent.project_id,
        agent_id=entry.agent_id,
        resource_id=entry.resource_id,
        thread_id=entry.thread_id,
        entry_id=entry.id,
        content=entry.content,
        visible=visible,
        created_at=entry.created_at,
    )
    _queue_embedding(entry.agent.project_id)
    return item


def index_note(*, note, content: str) -> SearchItem:
    """Index a note: its agent is its owner, or None for a note its project shares."""
    item = SearchItem.objects.create(
        kind=ItemKind.NOTE,
        project_id=note.project_id,
        agent_id=note.agent_id,
        note_id=note.id,
        content=content,
        visible=True,
        created_at=note.created_at,
    )
    _queue_embedding(note.project_id)
    return item


def index_note_content(*, note, content: str) -> None:
    """Replace a note's search text (its vectors are made again)."""
    item = SearchItem.objects.filter(kind=ItemKind.NOTE, note_id=note.id).first()
    if item is None:
        index_note(note=note, content=content)
    elif item.content != content:
        index_set_content(item=item, content=content)


def index_artifact(*, artifact, project_id, agent_id, resource_id, text: str) -> SearchItem:
    """Index a text artifact of a run under its thread (its bytes decoded as text)."""
    item = SearchItem.objects.create(
        kind=ItemKind.ARTIFACT,
        project_id=project_id,
        agent_id=agent_id,
        resource_id=resource_id,
        thread_id=artifact.thread_id,
        artifact_id=artifact.id,
        content=text,
        visible=True,
        created_at=artifact.created_at,
    )
    _queue_embedding(project_id)
    return item


def index_chunks(*, document, chunks, visible: bool) -> None:
    kb = document.knowledge_base
    SearchItem.objects.bulk_create(
        [
            SearchItem(
                kind=ItemKind.CHUNK,
                project_id=kb.project_id,
                knowledge_base_id=kb.id,
                chunk_id=chunk.id,
                content=chunk.content,
                visible=visible,
                created_at=document.created_at,
            )
            for chunk in chunks
        ]
    )
    _queue_embedding(kb.project_id)


def index_set_visible(*, items: Q, visible: bool) -> None:
    """Show or hide the items matching `items` (a Q on SearchItem), vectors included."""
    with transaction.atomic():
        ids = list(SearchItem.objects.filter(items).values_list("id", flat=True))
        SearchItem.objects.filter(id__in=ids).update(visible=visible)
        ItemEmbedding.objects.filter(item_id__in=ids).update(visible=visible)


def index_set_content(*, item: SearchItem, content: str) -> None:
    """Replace an item's text; its old vectors no longer describe it and are dropped."""
    SearchItem.objects.filter(pk=item.pk).update(content=content)
    ItemEmbedding.objects.filter(item=item).delete()
    _queue_embedding(item.project_id)


def _queue_embedding(project_id) -> None:
    from apps.search.vectors import vectors_sync_enqueue

    vectors_sync_enqueue(project_id=project_id)


def lexical_index_compact() -> None:
    """Rewrite the full-text index without the entries of deleted rows (after a forget)."""
    with transaction.atomic():
        backend().lexical_index_compact()
