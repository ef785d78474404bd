"""Writes to the search index. Owning apps call these in the same transaction as their rows."""

from django.db import transaction
from django.db.models import Q

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
