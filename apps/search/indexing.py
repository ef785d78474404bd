"""Writes to the search index. Owning apps call these in the same transaction as their rows."""

from django.db import connection, transaction
from django.db.models import Q

from apps.search.models import ItemEmbedding, ItemKind, SearchItem
from apps.search.scope import db_uuid

# Tool payloads are indexed as text too, but only this much of them.
PAYLOAD_TEXT_CHARS = 2000


def index_messages(*, thread, after_seq: int) -> None:
    """Index the thread's messages stored after `after_seq`, and queue their embedding.

    One INSERT … SELECT copies them, so a batch costs one statement and no Python per row.
    A message is found by its content, its tool name and the first PAYLOAD_TEXT_CHARS of its
    payload's JSON.
    """
    project_id = thread.agent.project_id
    resource = db_uuid(thread.resource_id) if thread.resource_id else None
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            INSERT INTO search_searchitem
                (kind, project_id, agent_id, resource_id, thread_id, message_id, content,
                 visible, created_at)
            SELECT %s, %s, %s, %s, m.thread_id, m.id, {_message_text_sql()}, %s, m.created_at
            FROM threads_message m
            WHERE m.thread_id = %s AND m.seq > %s
            """,
            [
                ItemKind.MESSAGE,
                db_uuid(project_id),
                db_uuid(thread.agent_id),
                resource,
                True,
                db_uuid(thread.id),
                after_seq,
            ],
        )
    _queue_embedding(project_id)


def _message_text_sql() -> str:
    """SQL for a message's search text: name, content and the start of its payload's JSON."""
    if connection.vendor == "postgresql":
        return (
            f"concat_ws(E'\\n', NULLIF(m.name, ''), NULLIF(m.content, ''), "
            f"left(m.payload::text, {PAYLOAD_TEXT_CHARS}))"
        )
    return (
        "rtrim(coalesce(NULLIF(m.name, '') || char(10), '') "
        "|| coalesce(NULLIF(m.content, '') || char(10), '') "
        f"|| coalesce(substr(m.payload, 1, {PAYLOAD_TEXT_CHARS}), ''), char(10))"
    )


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
