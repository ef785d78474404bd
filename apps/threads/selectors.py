"""Reads of threads, messages and runs, always within one agent's scope."""

import uuid

from django.db.models import Count, F, Q, QuerySet, Sum

from apps.core.errors import NotFound
from apps.core.ids import uuid7_floor
from apps.tenancy.models import Agent
from apps.tenancy.selectors import resource_id_clean, resource_id_form
from apps.threads.models import Message, Run, Thread


def thread_list(*, agent: Agent, resource_id: str | None = None, channel: str | None = None):
    threads = Thread.objects.filter(agent=agent).select_related("resource")
    if resource_id is not None:
        threads = threads.filter(resource__external_id=resource_id_clean(resource_id))
    if channel is not None:
        threads = threads.filter(channel=channel)
    return threads


def thread_get(*, agent: Agent, thread_id: uuid.UUID, related: tuple[str, ...] = ()) -> Thread:
    """Return the agent's thread with its end user, and the relations named in `related` read
    in the same query (select_related), or raise NotFound."""
    threads = Thread.objects.select_related("resource", *related)
    thread = threads.filter(agent=agent, pk=thread_id).first()
    if thread is None:
        raise NotFound("No such thread.")
    return thread


def thread_check(*, agent: Agent, thread_id: uuid.UUID) -> None:
    """Raise NotFound unless the thread is the agent's (for reads that need only its id)."""
    if not Thread.objects.filter(agent=agent, pk=thread_id).exists():
        raise NotFound("No such thread.")


def thread_exists(*, thread_id: uuid.UUID) -> bool:
    """Say whether the thread is still there (a write naming it may have raced its deletion)."""
    return Thread.objects.filter(pk=thread_id).exists()


def run_exists(*, run_id: uuid.UUID) -> bool:
    """Say whether the run is still there (its thread may have been deleted meanwhile)."""
    return Run.objects.filter(pk=run_id).exists()


def run_get(*, agent: Agent, run_id: uuid.UUID) -> Run:
    run = Run.objects.select_related("thread").filter(thread__agent=agent, pk=run_id).first()
    if run is None:
        raise NotFound("No such run.")
    return run


def run_in_thread(*, thread: Thread, run_id: uuid.UUID) -> Run | None:
    return Run.objects.filter(thread=thread, pk=run_id).first()


def message_page(
    *, thread: Thread, after_seq: int | None, before_seq: int | None, limit: int
) -> tuple[list[Message], bool]:
    """Return up to limit messages in seq order and whether more lie in the paging direction.

    With only before_seq the page is the newest messages before it (paging backwards);
    otherwise the oldest messages after after_seq (default 0), below before_seq if given.
    """
    messages: QuerySet[Message] = Message.objects.filter(thread=thread)
    if before_seq is not None:
        messages = messages.filter(seq__lt=before_seq)
    if after_seq is None and before_seq is not None:
        page = list(messages.order_by("-seq")[: limit + 1])
        has_more = len(page) > limit
        return list(reversed(page[:limit])), has_more
    page = list(messages.filter(seq__gt=after_seq or 0).order_by("seq")[: limit + 1])
    return page[:limit], len(page) > limit


# What a context shows of a recent message.
_TAIL_FIELDS = (
    "id",
    "seq",
    "role",
    "kind",
    "name",
    "content",
    "payload",
    "created_at",
    "token_count",
)


def message_tail_within(*, thread: Thread, after_seq: int, max_tokens: int, limit: int) -> list:
    """Return the thread's newest messages after after_seq that fit max_tokens together (by
    their stored token counts; `limit` at most), oldest first, as named rows of what a context
    shows of them (model instances of a thread's tail took longer to build than the query took
    to run).

    Their sizes are read first and the rows only of those that fit: a thread's unobserved
    tail can hold hundreds of messages (up to the observer's threshold, 30k tokens), and a
    context of a few thousand tokens shows the newest of them.
    """
    newest = Message.objects.filter(thread=thread, seq__gt=after_seq).order_by("-seq")
    total, first = 0, None
    for seq, tokens in newest.values_list("seq", "token_count")[:limit]:
        total += tokens
        if total > max_tokens:
            break
        first = seq
    if first is None:
        return []
    rows = Message.objects.filter(thread=thread, seq__gte=first).order_by("seq")
    return list(rows.values_list(*_TAIL_FIELDS, named=True))


# What a search hit shows of a message and of the messages around it.
_HIT_FIELDS = (*_TAIL_FIELDS, "thread_id", "metadata")


def messages_at(*, places, before: int, after: int) -> dict[tuple[uuid.UUID, int], tuple]:
    """Return the messages at places ((thread id, seq) pairs, of any threads) and from `before`
    before to `after` after each, by (thread id, seq), as named rows (id, seq, role, kind,
    name, content, payload, created_at, token_count, thread_id, metadata), in one query: each
    message once however many stretches hold it.

    What a search shows of its message hits. Each thread's seqs are probed through its unique
    (thread, seq) index, never by walking the thread; named rows rather than model instances,
    which took as long to build as the query took to run (bench/context.py, in-process).
    """
    wanted: dict[uuid.UUID, set[int]] = {}
    for thread_id, seq in places:
        seqs = wanted.setdefault(thread_id, set())
        seqs.update(at for at in range(seq - before, seq + after + 1) if at > 0)
    condition = Q()
    for thread_id, seqs in wanted.items():
        condition |= Q(thread_id=thread_id, seq__in=sorted(seqs))
    if not condition:
        return {}
    rows = Message.objects.filter(condition).values_list(*_HIT_FIELDS, named=True)
    return {(row.thread_id, row.seq): row for row in rows}


def messages_around(*, thread, seqs, before: int, after: int) -> dict[int, tuple]:
    """Return the thread's (a Thread or its id) messages from `before` before to `after` after
    each of seqs, by seq, as messages_at's rows (one query, each message once however many
    stretches hold it)."""
    thread_id = getattr(thread, "pk", thread)
    found = messages_at(places=[(thread_id, seq) for seq in seqs], before=before, after=after)
    return {seq: row for (_, seq), row in found.items()}


def message_latest(*, thread: Thread, role: str) -> Message | None:
    """Return the thread's latest message of this role."""
    return Message.objects.filter(thread=thread, role=role).order_by("-seq").first()


def messages_by_id(*, thread: Thread, ids) -> dict[str, Message]:
    """Return the thread's messages with these ids, by id as text."""
    return {str(m.id): m for m in Message.objects.filter(thread=thread, id__in=list(ids))}


def message_get(*, agent: Agent, message_id: uuid.UUID) -> Message | None:
    """The agent's message, with its thread (read in the same query: callers go on to it, and
    read later, a thread deleted meanwhile would be a DoesNotExist mid-request)."""
    return (
        Message.objects.select_related("thread").filter(thread__agent=agent, pk=message_id).first()
    )


def thread_counts(*, since) -> dict:
    """Totals for the dashboard; `recent` counts messages stored since `since`.

    Stored, by their time-ordered ids: a message's created_at is when the agent says it was
    said, so an import of last year's chat counted nothing, and a batch dated ahead counted
    twice."""
    totals = Thread.objects.aggregate(threads=Count("id"), messages=Sum("message_count"))
    recent = Message.objects.filter(id__gte=uuid7_floor(since)).count()
    return {
        "threads": totals["threads"],
        "message_total": totals["messages"] or 0,
        "recent": recent,
    }


def thread_browse(
    *,
    project_id=None,
    agent_id=None,
    resource: str = "",
    channel: str = "",
    since=None,
    until=None,
    thread_ids=None,
):
    """Threads of every agent, newest activity first, for operators."""
    threads = Thread.objects.select_related("agent__project", "resource").order_by(
        F("last_message_at").desc(nulls_last=True), "-id"
    )
    if project_id:
        threads = threads.filter(agent__project_id=project_id)
    if agent_id:
        threads = threads.filter(agent_id=agent_id)
    if resource:
        threads = threads.filter(resource__external_id=resource_id_form(resource))
    if channel:
        threads = threads.filter(channel=channel)
    if since:
        threads = threads.filter(created_at__date__gte=since)
    if until:
        threads = threads.filter(created_at__date__lte=until)
    if thread_ids is not None:
        threads = threads.filter(id__in=thread_ids)
    return threads


def thread_for_operator(*, thread_id: uuid.UUID) -> Thread:
    thread = (
        Thread.objects.select_related("agent__project", "resource").filter(pk=thread_id).first()
    )
    if thread is None:
        raise NotFound("No such thread.")
    return thread


def timeline_page(
    *,
    thread: Thread,
    before_seq: int | None = None,
    around_seq: int | None = None,
    after_seq: int | None = None,
    size: int,
):
    """Return (messages in seq order, first seq loaded) for the console timeline.

    The newest `size` messages by default; those before `before_seq`; those after `after_seq`
    (oldest first, to load later messages below a window); or a window centred on `around_seq`,
    so a link to one message opens the timeline where it is.
    """
    # Runs prefetched, not joined: a page holds a few runs, and a join built one Run per message.
    messages = Message.objects.filter(thread=thread).prefetch_related("run")
    if around_seq is not None:
        page = list(messages.filter(seq__gte=around_seq - size // 2).order_by("seq")[:size])
    elif after_seq is not None:
        page = list(messages.filter(seq__gt=after_seq).order_by("seq")[:size])
    else:
        if before_seq is not None:
            messages = messages.filter(seq__lt=before_seq)
        page = list(reversed(messages.order_by("-seq")[:size]))
    return page, (page[0].seq if page else None)
