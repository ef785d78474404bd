"""Writes of threads, messages and runs."""

import uuid
from dataclasses import dataclass, field
from datetime import datetime

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from apps.audit.services import audit_record, audit_subject
from apps.core.database import deleted_meanwhile
from apps.core.errors import ApplicationError, Conflict, NotFound, Unprocessable
from apps.providers.tokens import count_message_tokens
from apps.search.indexing import index_messages
from apps.tenancy.models import Agent
from apps.tenancy.selectors import resource_id_clean
from apps.tenancy.services import resource_get_or_create
from apps.threads.hooks import messages_appended
from apps.threads.models import FINISHED_STATUSES, OPEN_STATUSES, Message, Run, Thread
from apps.threads.outcome import message_outcome


@dataclass(frozen=True)
class MessageInput:
    role: str
    content: str = ""
    kind: str = "message"
    actor: str = ""
    name: str = ""
    payload: object = None
    metadata: dict = field(default_factory=dict)
    created_at: datetime | None = None
    idempotency_key: str | None = None
    run_id: uuid.UUID | None = None


@dataclass(frozen=True)
class AppendedMessage:
    message: Message
    replayed: bool  # True when an idempotency key matched a message stored earlier


def thread_resolve_or_create(
    *,
    agent: Agent,
    resource_id: str | None = None,
    channel: str = "",
    external_id: str = "",
    title: str | None = None,
    metadata: dict | None = None,
) -> tuple[Thread, bool]:
    """Return (thread, created). With an external_id, an existing thread of the agent is reused.

    resource_id, title and metadata left as None are not asked for. An existing thread is
    returned only when what is asked for is what it holds: another end user's thread, or a
    title or metadata that would be silently ignored, is a 409 naming the fields (a thread's
    title and metadata change through PATCH; its end user never changes).
    """
    if resource_id is not None:
        resource_id = resource_id_clean(resource_id)
    asked = {"resource_id": resource_id, "title": title, "metadata": metadata}
    if external_id:
        existing = _thread_by_external_id(agent, channel, external_id)
        if existing is not None:
            return _as_asked(existing, asked), False
    fields = {
        "agent": agent,
        "resource": (
            resource_get_or_create(project=agent.project, external_id=resource_id)
            if resource_id
            else None
        ),
        "channel": channel,
        "external_id": external_id,
        "title": title or "",
        "metadata": metadata or {},
    }
    try:
        with transaction.atomic():
            return Thread.objects.create(**fields), True
    except IntegrityError:
        # Another request created the same (channel, external_id) thread a moment ago.
        existing = _thread_by_external_id(agent, channel, external_id) if external_id else None
        if existing is not None:
            return _as_asked(existing, asked), False
        # Or the end user was deleted meanwhile (forgotten): its foreign key failed at the commit.
        if deleted_meanwhile({"resource_id": fields["resource"]}) is None:
            raise
        raise Conflict(
            "resource_id: the end user was deleted while this request ran; nothing was stored. "
            "Send the request again to start a thread of a new end user with that id.",
            code="deleted_meanwhile",
        ) from None


def _thread_by_external_id(agent: Agent, channel: str, external_id: str) -> Thread | None:
    return (
        Thread.objects.select_related("resource")
        .filter(agent=agent, channel=channel, external_id=external_id)
        .first()
    )


def _as_asked(thread: Thread, asked: dict) -> Thread:
    """Return the resolved thread, or refuse it (409) where it differs from what was asked."""
    held = {
        "resource_id": thread.resource.external_id if thread.resource else None,
        "title": thread.title,
        "metadata": thread.metadata,
    }
    differing = [name for name, value in asked.items() if value is not None and value != held[name]]
    if not differing:
        return thread
    named = ", ".join(differing)
    fix = (
        "use another external_id for another end user"
        if "resource_id" in differing
        else f"change them with PATCH /api/v1/threads/{thread.id}, or leave them out"
    )
    raise Conflict(
        f"{named}: the thread with channel {thread.channel!r} and external_id "
        f"{thread.external_id!r} exists with a different {named}; {fix}.",
        details={
            "thread_id": str(thread.id),
            "held": {name: held[name] for name in differing},
        },
    )


def thread_update(*, thread: Thread, title: str | None = None, metadata: dict | None = None):
    if title is not None:
        thread.title = title
    if metadata is not None:
        thread.metadata = metadata
    thread.save(update_fields=["title", "metadata", "updated_at"])
    return thread


def thread_delete(*, thread: Thread, actor: str) -> None:
    """Delete the thread with everything it holds; NotFound if a concurrent request did first.

    The thread row is locked (PostgreSQL: FOR UPDATE; SQLite: the IMMEDIATE transaction) before
    its rows are collected, so a message appended meanwhile waits and then finds no thread:
    collected outside the transaction, such a message was left out of the delete, whose commit
    then failed on it (a 500, and the thread stayed).
    """
    with transaction.atomic():
        if not Thread.objects.select_for_update().filter(pk=thread.pk).exists():
            raise NotFound("No such thread.")
        audit_record(
            actor=actor,
            action="thread.delete",
            object_type="thread",
            object_id=thread.id,
            project_id=thread.agent.project_id,
            summary=thread.title or str(thread.id),
            before={"messages": thread.message_count},
            subject=audit_subject(thread.agent_id, thread.resource_id),
        )
        thread.delete()


def thread_append_messages(
    *, agent: Agent, thread_id: uuid.UUID, items: list[MessageInput]
) -> list[AppendedMessage]:
    """Store a batch in one transaction, numbering new messages after the thread's last seq.

    1. Lock the thread row (PostgreSQL: FOR UPDATE; SQLite: the IMMEDIATE transaction), so
       concurrent appends are serialised and seq has no gaps or duplicates.
    2. Answer an idempotency key seen before with the stored message, if the body matches.
    3. Insert the new messages and advance the thread's counters.
    """
    with transaction.atomic():
        thread = (
            Thread.objects.select_for_update()
            .select_related("agent")
            .filter(agent=agent, pk=thread_id)
            .first()
        )
        if thread is None:
            raise NotFound("No such thread.")
        _check_runs(thread, items)
        stored = _messages_by_key(thread, items)
        results: list[AppendedMessage] = []
        new: list[Message] = []
        seq = thread.last_seq
        now = timezone.now()
        for index, item in enumerate(items):
            prior = stored.get(item.idempotency_key) if item.idempotency_key else None
            if prior is not None:
                _check_same_body(prior, item, index)
                results.append(AppendedMessage(prior, replayed=True))
                continue
            _check_said_something(index, item)  # a replay answers what was stored, as it was
            seq += 1
            message = _message_from_input(thread, seq, item, now)
            new.append(message)
            if item.idempotency_key:
                stored[item.idempotency_key] = message
            results.append(AppendedMessage(message, replayed=False))
        if new:
            Message.objects.bulk_create(new)
            _advance_counters(thread, new, seq, now)
            index_messages(thread=thread, messages=new)
            messages_appended.send(sender=Thread, thread=thread, messages=new)
    return results


def _check_said_something(index: int, item: MessageInput) -> None:
    """Refuse a user message with neither content nor payload: a turn that says nothing would
    be stored, counted and shown in contexts as if the user had spoken."""
    said = item.content.strip() or item.payload is not None
    if item.role == "user" and item.kind == "message" and not said:
        problem = (
            "A user message needs content, what the user said (or a payload, such as an "
            "attachment's description)."
        )
        # details nest as a serializer's errors of one message of the batch do.
        raise ApplicationError(
            f"messages[{index}].content: {problem}",
            details={"messages": {str(index): {"content": [problem]}}},
        )


def _check_runs(thread: Thread, items: list[MessageInput]) -> None:
    run_ids = {item.run_id for item in items if item.run_id}
    if not run_ids:
        return
    found = set(Run.objects.filter(thread=thread, pk__in=run_ids).values_list("pk", flat=True))
    missing = sorted(str(run_id) for run_id in run_ids - found)
    if missing:
        raise Unprocessable(
            f"run_id {missing[0]} is not a run of this thread.",
            details={"run_ids": missing},
        )


def _messages_by_key(thread: Thread, items: list[MessageInput]) -> dict[str, Message]:
    keys = {item.idempotency_key for item in items if item.idempotency_key}
    if not keys:
        return {}
    stored = Message.objects.filter(thread=thread, idempotency_key__in=keys)
    return {message.idempotency_key: message for message in stored}


def _check_same_body(prior: Message, item: MessageInput, index: int) -> None:
    differs = [
        name
        for name in ("role", "kind", "actor", "name", "content", "payload", "metadata")
        if getattr(prior, name) != getattr(item, name)
    ]
    if (item.run_id or None) != prior.run_id:
        differs.append("run_id")
    if item.created_at is not None and item.created_at != prior.created_at:
        differs.append("created_at")
    if differs:
        raise Conflict(
            f"messages[{index}]: idempotency_key {item.idempotency_key!r} was already used for "
            f"a different message (differs in {', '.join(differs)}). Use a new key.",
            details={"index": index, "fields": differs, "message_id": str(prior.id)},
        )


def _message_from_input(thread: Thread, seq: int, item: MessageInput, now) -> Message:
    message = Message(
        thread=thread,
        seq=seq,
        role=item.role,
        kind=item.kind,
        actor=item.actor,
        name=item.name,
        content=item.content,
        payload=item.payload,
        metadata=item.metadata,
        token_count=count_message_tokens(item.content, item.payload),
        run_id=item.run_id,
        idempotency_key=item.idempotency_key,
        created_at=item.created_at or now,
    )
    message.is_error = message_outcome(message).error
    return message


def _advance_counters(thread: Thread, new: list[Message], last_seq: int, now) -> None:
    newest = max(message.created_at for message in new)
    if thread.last_message_at and thread.last_message_at > newest:
        newest = thread.last_message_at
    Thread.objects.filter(pk=thread.pk).update(
        last_seq=last_seq,
        message_count=F("message_count") + len(new),
        token_count=F("token_count") + sum(message.token_count for message in new),
        last_message_at=newest,
        updated_at=now,
    )


def run_start(*, thread: Thread, name: str = "", metadata: dict | None = None) -> Run:
    return Run.objects.create(thread=thread, name=name, metadata=metadata or {})


def run_finish(
    *,
    run: Run,
    status: str,
    summary: str = "",
    error: str = "",
    metadata: dict | None = None,
) -> Run:
    """Close a running or suspended run; a run is finished once (a second finish is a 409).

    A suspended run may be finished too (cancelled while it waits for a human, say); its
    checkpoints stay as they are, for the record.
    """
    if status not in FINISHED_STATUSES:
        raise Unprocessable("status must be one of succeeded, failed, cancelled.")
    now = timezone.now()
    merged = {**run.metadata, **(metadata or {})}
    finished = Run.objects.filter(pk=run.pk, status__in=OPEN_STATUSES).update(
        status=status,
        summary=summary,
        error=error,
        metadata=merged,
        finished_at=now,
        updated_at=now,
    )
    run.refresh_from_db()
    if not finished:
        raise Conflict(
            f"Run is already {run.status}; a run can be finished once.",
            details={"status": run.status},
        )
    return run
