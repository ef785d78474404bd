"""The tools. Each parses nothing and decides nothing: it calls what the REST view calls."""

import uuid
from typing import Literal

from django.conf import settings
from django.db import transaction
from pydantic import Field, field_validator

from apps.agenttools.arguments import (
    Arguments,
    Integer,
    Json,
    JsonObject,
    Number,
    Text,
    ThreadArguments,
)
from apps.agenttools.registry import Caller, tool
from apps.context.answer import context_brief
from apps.context.assembly import context_assemble
from apps.core.errors import NotFound, Unprocessable
from apps.episodic import selectors as episodic_selectors
from apps.episodic import services as episodic_services
from apps.memconfig.selectors import config_effective
from apps.retrieval.selectors import retrieve
from apps.runstate import selectors as runstate_selectors
from apps.runstate import services as runstate_services
from apps.search.results import search_answer
from apps.tenancy.selectors import resource_find
from apps.tenancy.services import resource_get_or_create
from apps.threads import selectors as thread_selectors
from apps.threads import services as thread_services


def thread_of(caller: Caller, args: ThreadArguments, *, create: bool = False):
    """Return the caller's thread named by the arguments; another agent's is not found."""
    if args.thread_id is not None:
        return thread_selectors.thread_get(agent=caller.agent, thread_id=args.thread_id)
    channel = args.channel or ""
    external_id = args.external_id
    assert external_id  # ThreadArguments asks for it when there is no thread_id
    if create:
        thread, _ = thread_services.thread_resolve_or_create(
            agent=caller.agent, channel=channel, external_id=external_id
        )
        return thread
    thread = (
        thread_selectors.thread_list(agent=caller.agent, channel=channel)
        .filter(external_id=external_id)
        .first()
    )
    if thread is None:
        raise NotFound(
            f"No thread with channel {channel!r} and external_id {args.external_id!r}; "
            "append_messages creates it."
        )
    return thread


def resource_of(caller: Caller, resource_id: str | None):
    if resource_id is None:
        return None
    resource = resource_find(project=caller.agent.project, external_id=resource_id)
    if resource is None:
        raise NotFound(f"No resource {resource_id!r} in this project.")
    return resource


class GetContext(ThreadArguments):
    query: Text | None = Field(
        None,
        max_length=2000,
        description="What the context is for; default: the last user message.",
    )
    max_tokens: Integer | None = Field(
        None, ge=200, le=2_000_000, description="Token budget; default: the agent's setting."
    )


@tool(name="get_context", arguments=GetContext)
def get_context(caller: Caller, args: GetContext) -> dict:
    """Get the assembled memory for a thread before answering: a system prompt (profile,
    session memory, observations, memory entries, knowledge, recalled messages) and the recent
    messages, within max_tokens."""
    thread = thread_of(caller, args)
    max_tokens = args.max_tokens or config_effective(agent=caller.agent)["context_max_tokens"]
    answer = context_assemble(
        agent=caller.agent, thread=thread, query=args.query, max_tokens=max_tokens
    )
    return context_brief(answer)


class MessageIn(Arguments):
    role: Literal["user", "assistant", "system", "tool"]
    content: Text = Field("", description="The message text.")
    kind: Literal["message", "tool_call", "tool_result", "error", "event"] = "message"
    name: Text = Field("", max_length=200, description="For tool calls and results: the tool.")
    payload: Json = Field(None, description="For tool calls and results: arguments or output.")
    metadata: JsonObject = Field(default_factory=dict)
    idempotency_key: Text | None = Field(
        None, max_length=200, description="Repeat it on a retry and the message is stored once."
    )

    @field_validator("content")
    @classmethod
    def _within_limit(cls, value: str) -> str:
        limit = settings.MESSAGE_MAX_CONTENT_CHARS
        if len(value) > limit:
            raise ValueError(f"{len(value)} characters; the limit is {limit}. Split it.")
        return value


class AppendMessages(ThreadArguments):
    messages: list[MessageIn] = Field(min_length=1, description="Messages, oldest first.")

    @field_validator("messages")
    @classmethod
    def _batch_within_limit(cls, value: list) -> list:
        if len(value) > settings.MESSAGE_BATCH_MAX:
            raise ValueError(f"{len(value)} messages; the limit is {settings.MESSAGE_BATCH_MAX}.")
        return value


@tool(name="append_messages", arguments=AppendMessages, writes=True)
def append_messages(caller: Caller, args: AppendMessages) -> dict:
    """Log messages (the user's, yours, tool calls and results) to a thread, oldest first. A
    thread named by channel + external_id is created on first use."""
    # One transaction: a batch refused (a user turn that says nothing, a run of another
    # thread) leaves no thread behind that this call created for it.
    with transaction.atomic():
        thread = thread_of(caller, args, create=True)
        appended = thread_services.thread_append_messages(
            agent=caller.agent,
            thread_id=thread.id,
            items=[thread_services.MessageInput(**item.model_dump()) for item in args.messages],
        )
    return {
        "thread_id": thread.id,
        "messages": [
            {"id": done.message.id, "seq": done.message.seq, "replayed": done.replayed}
            for done in appended
        ],
    }


SearchScope = Literal["messages", "knowledge", "episodic", "notes", "artifacts"]


def _messages_only() -> list[SearchScope]:
    return ["messages"]


class SearchMemory(Arguments):
    query: Text = Field(min_length=1, max_length=2000)
    scopes: list[SearchScope] = Field(
        default_factory=_messages_only, min_length=1, description="What to search."
    )
    top_k: Integer = Field(10, ge=1, le=50)
    min_similarity: Number | None = Field(
        None,
        ge=0.0,
        le=1.0,
        description="Drop hits found only by meaning that are less similar than this (0-1); "
        "word matches stay. Default: the configured floor.",
    )


@tool(name="search_memory", arguments=SearchMemory)
def search_memory(caller: Caller, args: SearchMemory) -> dict:
    """Search past messages of all your threads, the project's knowledge bases, your memory
    entries and notes by words and meaning; each hit has its score (notes also their path), and
    a message hit the messages around it. `warnings` comes only when there are any."""
    found = retrieve(
        agent=caller.agent,
        query=args.query,
        scopes=list(args.scopes),
        top_k=args.top_k,
        min_similarity=args.min_similarity,
    )
    # The same answer as POST /api/v1/search gives for the same search (apps/search/results.py).
    return search_answer(found)


class RecallMemory(Arguments):
    query: Text = Field(min_length=1, max_length=2000, description="What you want to remember.")
    resource_id: Text | None = Field(None, max_length=200, description="Only this end user's.")
    top_k: Integer = Field(5, ge=1, le=50)


@tool(name="recall_memory", arguments=RecallMemory)
def recall_memory(caller: Caller, args: RecallMemory) -> dict:
    """Recall approved memory entries (facts and case notes kept from earlier conversations)
    that match the query, best first."""
    recalled, warnings = episodic_selectors.entry_recall(
        agent=caller.agent,
        resource=resource_of(caller, args.resource_id),
        query=args.query,
        top_k=args.top_k,
    )
    episodic_services.entries_mark_recalled(entry_ids=[found.entry.id for found in recalled])
    results = [
        {
            "id": found.entry.id,
            "content": found.entry.content,
            "kind": found.entry.kind,
            "source": found.entry.source,
            "evidence": found.entry.evidence,
            "score": round(found.score, 6),
            "created_at": found.entry.created_at,
        }
        for found in recalled
    ]
    return {"results": results, "warnings": warnings}


class Remember(Arguments):
    content: Text = Field(min_length=1, description="The fact or case note, in one sentence.")
    # Optional, as in POST /api/v1/episodic: the same proposal is valid through either door.
    evidence: Text = Field(
        "", description="The exact words it rests on, quoted from the message (optional)."
    )
    message_id: uuid.UUID | None = Field(None, description="The message the evidence is from.")
    source: Literal[
        "user_assertion", "user_accepted_assistant_proposal", "verified_assistant_finding", "api"
    ] = Field("api", description="How it is known; a transcript source needs message_id.")
    resource_id: Text | None = Field(
        None, max_length=200, description="The end user it is about; default: the message's."
    )


@tool(name="remember", arguments=Remember, writes=True)
def remember(caller: Caller, args: Remember) -> dict:
    """Propose a memory entry backed by evidence. It waits for an operator's approval unless the
    project approves entries automatically; an equal or near-equal entry is returned instead."""
    message = None
    if args.message_id is not None:
        message = thread_selectors.message_get(agent=caller.agent, message_id=args.message_id)
        if message is None:
            raise Unprocessable(f"message_id {args.message_id} is not a message of yours.")
    resource = None
    if args.resource_id is not None:
        resource = resource_get_or_create(
            project=caller.agent.project, external_id=args.resource_id
        )
    elif message is not None:
        resource = message.thread.resource
    result = episodic_services.entry_create(
        agent=caller.agent,
        resource=resource,
        content=args.content,
        evidence=args.evidence,
        source=args.source,
        message=message,
        actor=caller.actor,
    )
    return {
        "id": result.entry.id,
        "status": result.entry.status,
        "content": result.entry.content,
        "created": result.created,
        "duplicate_of": result.duplicate_of,
    }


class PlanGet(ThreadArguments):
    pass


@tool(name="plan_get", arguments=PlanGet)
def plan_get(caller: Caller, args: PlanGet) -> dict:
    """Read the thread's plan (goal, phase, iteration, steps) and its version; version 0 means
    no plan yet."""
    return _plan(thread_of(caller, args))


def _plan(thread) -> dict:
    plan = runstate_selectors.plan_get(thread=thread)
    if plan is None:
        return {
            "thread_id": thread.id,
            "version": 0,
            "goal": "",
            "phase": "",
            "iteration": 0,
            "steps": [],
        }
    fields = ("version", "goal", "phase", "iteration", "steps")
    return {"thread_id": thread.id, **{name: getattr(plan, name) for name in fields}}


class PlanStep(Arguments):
    id: Text | None = Field(None, max_length=100)
    title: Text = Field(min_length=1, max_length=1000)
    status: Literal["pending", "in_progress", "done", "failed", "skipped"] = "pending"
    notes: Text | None = None


class PlanUpdate(ThreadArguments):
    version: Integer = Field(
        ge=0, le=2_147_483_647, description="The version you read with plan_get (0: no plan)."
    )
    goal: Text = ""
    phase: Text = Field("", max_length=200)
    iteration: Integer = Field(0, ge=0, le=2_147_483_647)
    steps: list[PlanStep] = Field(default_factory=list)


@tool(name="plan_update", arguments=PlanUpdate, writes=True)
def plan_update(caller: Caller, args: PlanUpdate) -> dict:
    """Replace the thread's plan. Pass the version you read; if someone changed it since, you
    are told the current version: read it again and reapply your change."""
    thread = thread_of(caller, args)
    fields = {
        "goal": args.goal,
        "phase": args.phase,
        "iteration": args.iteration,
        "steps": [step.model_dump(exclude_none=True) for step in args.steps],
    }
    runstate_services.plan_put(thread=thread, expected_version=args.version, fields=fields)
    return _plan(thread)
