"""Hippo consolidation: messages that left the short-term window become consolidated entries.

A thread's messages older than its last `short_term_limit` are judged in batches, in seq order:
with a chat model, `is_useful` → `rewrite_memory` → `create_memory` (three prompts); without one,
or when the model fails, the extractive rules of consolidation_fallback. What is kept is stored
through entry_create (hash and similarity dedupe, approval as config says) as entries of kind
`consolidated`, with the thread and the batch's first and last seq as provenance.
"""

import logging
from dataclasses import dataclass, field, replace

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from apps.core.errors import ApplicationError
from apps.episodic import consolidation_fallback as fallback
from apps.episodic.consolidation_answers import replaced_entries, seqs_among
from apps.episodic.consolidation_dedupe import KnownEntries
from apps.episodic.consolidation_extractive import batch_keep
from apps.episodic.models import ConsolidationProgress, EntryKind, EntrySource
from apps.episodic.prompts import consolidation_create as create_memory
from apps.episodic.prompts import consolidation_is_useful as is_useful
from apps.episodic.prompts import consolidation_rewrite as rewrite_memory
from apps.episodic.services import entries_embedded_ahead, entry_create
from apps.providers.answers import answer_problem
from apps.providers.failures import model_failure_report
from apps.providers.llm import ChatModel, LLMError, LLMOutputError
from apps.search.scope import Scope
from apps.search.selectors import query_vector, search

logger = logging.getLogger(__name__)
ACTOR = "consolidation"
# Messages judged per model round and per transaction: small enough that a crash loses little
# work and a prompt stays short, large enough that the three calls are not made per message.
BATCH_MESSAGES = 25
SIMILAR_SHOWN = 3  # existing entries shown to create_memory beside each candidate
_LLM_VERSION = f"{is_useful.VERSION}+{rewrite_memory.VERSION}+{create_memory.VERSION}"


@dataclass(frozen=True)
class Candidate:
    content: str
    first_seq: int
    last_seq: int
    message: object | None = None  # the message quoted by evidence, when there is one
    evidence: str = ""
    supersedes: object | None = None  # the live entry of the scope this one updates
    repeated_at: tuple[int, ...] = ()  # seqs of later messages that said the same


@dataclass
class ThreadReport:
    """What one thread's consolidation did, for the command's output and the tests."""

    thread_id: str
    first_seq: int | None = None
    last_seq: int | None = None
    messages: int = 0
    created: int = 0
    duplicates: int = 0
    skipped: int = 0  # messages judged not worth keeping
    repeats: int = 0  # candidates merged into another of their batch
    methods: set = field(default_factory=set)

    def __str__(self):
        if self.first_seq is None:
            return f"thread {self.thread_id}: nothing to consolidate"
        how = "+".join(sorted(self.methods)) or "-"
        return (
            f"thread {self.thread_id}: messages #{self.first_seq}–#{self.last_seq} "
            f"({self.messages}) → {self.created} entries created, {self.duplicates} already "
            f"known, {self.repeats} repeats merged, {self.skipped} messages skipped [{how}]"
        )


def progress_get(*, thread) -> ConsolidationProgress:
    progress, _ = ConsolidationProgress.objects.get_or_create(thread=thread)
    return progress


def consolidation_boundary(*, thread, config) -> int:
    """Return the last seq outside the short-term window: messages up to it may consolidate."""
    return max(0, thread.last_seq - config["short_term_limit"])


def thread_consolidate(*, thread, config, chat: ChatModel | None) -> ThreadReport:
    """Consolidate every message of the thread outside its short-term window; report it.

    1. Read how far the thread is consolidated (K) and its boundary (last_seq −
       short_term_limit); record the run's time, which the schedule's interval counts from.
    2. Take the messages K+1…boundary in batches of BATCH_MESSAGES.
    3. Judge a batch with the model (is_useful → rewrite_memory → create_memory); when there
       is none, or it fails or answers nothing usable, with the extractive fallback, which
       merges what repeats and leaves out what repeats an entry of the scope.
    4. Publish atomically: move K from the batch's start to its end with a conditional UPDATE
       and store the batch's entries in the same transaction. If K had moved, another run
       consolidated this range first: stop. A run killed mid-batch rolls the batch back, so
       the next run judges it again and nothing is stored twice.
    """
    progress = progress_get(thread=thread)
    ConsolidationProgress.objects.filter(pk=progress.pk).update(last_run_at=timezone.now())
    report = ThreadReport(thread_id=str(thread.pk))
    after = progress.consolidated_up_to
    boundary = consolidation_boundary(thread=thread, config=config)
    known = None
    while after < boundary:
        batch = list(
            thread.messages.filter(seq__gt=after, seq__lte=boundary).order_by("seq")[
                :BATCH_MESSAGES
            ]
        )
        if not batch:
            break
        if known is None:
            known = KnownEntries(agent=thread.agent, resource=thread.resource)
        candidates, method, merged, known_before = _judge(thread, batch, config, chat, known)
        report.repeats += merged
        report.duplicates += known_before
        if not _publish(thread, after, batch, candidates, method, chat, report):
            break
        after = batch[-1].seq
    return report


def _judge(thread, batch, config, chat, known) -> tuple[list[Candidate], str, int, int]:
    """Return the batch's candidates, the method, how many merged, how many already known."""
    if chat is not None:
        try:
            return _judge_with_model(thread, batch, config, chat), "llm", 0, 0
        except LLMError as error:
            logger.warning(
                "consolidation of thread %s #%s–#%s fell back to extraction: %s",
                thread.pk,
                batch[0].seq,
                batch[-1].seq,
                error,
            )
            model_failure_report(
                thread=thread,
                stage="consolidation",
                first_seq=batch[0].seq,
                last_seq=batch[-1].seq,
                model=chat.model,
                prompt_version=_LLM_VERSION,
                error=error,
                outcome="extractive consolidation stored instead",
            )
    candidates, merged, known_before = batch_keep(
        thread=thread, batch=batch, config=config, known=known, candidate=Candidate
    )
    return candidates, "extractive", merged, known_before


def _judge_with_model(thread, batch, config, chat) -> list[Candidate]:
    by_seq = {message.seq: message for message in batch}
    answer = chat.complete_json(is_useful.is_useful_prompt(batch), required_keys=("useful",))
    useful = seqs_among(answer["useful"], by_seq, chat.model, "useful")
    if not useful:
        return []
    kept = [by_seq[seq] for seq in sorted(useful)]
    answer = chat.complete_json(rewrite_memory.rewrite_prompt(kept), required_keys=("memories",))
    drafts = _memories(answer["memories"], set(useful), chat.model, config)
    for draft in drafts:
        said = "\n".join(
            by_seq[seq].content or ""
            for seq in range(draft.first_seq, draft.last_seq + 1)
            if seq in useful
        )
        # A memory is a rewrite, not a summary: it may be longer than one short message, but
        # it keeps every identifier and error of the messages it stands for.
        problem = answer_problem(said, draft.content, may_grow=True)
        if problem:
            raise LLMOutputError(f"model {chat.model}: the memory {draft.content!r}: {problem}")
    if not drafts:
        return []
    similar = [_similar_entries(thread, draft.content) for draft in drafts]
    shown = [
        (draft.content, [(str(entry.pk), entry.content) for entry in entries])
        for draft, entries in zip(drafts, similar, strict=True)
    ]
    answer = chat.complete_json(create_memory.create_prompt(shown), required_keys=("create",))
    chosen = seqs_among(answer["create"], range(len(drafts)), chat.model, "create")
    replaced = replaced_entries(answer.get("supersedes"), similar, chat.model)
    return [
        replace(draft, supersedes=replaced.get(index))
        for index, draft in enumerate(drafts)
        if index in chosen
    ]


def _memories(value, useful: set[int], model: str, config) -> list[Candidate]:
    if not isinstance(value, list):
        raise LLMOutputError(f"model {model} answered memories that are not a list")
    limit = config["episodic_max_entry_length"]
    drafts = []
    for item in value:
        if not isinstance(item, dict) or not isinstance(item.get("content"), str):
            raise LLMOutputError(f"model {model} answered a memory without content text")
        content = item["content"].strip()
        if not content:
            continue
        seqs = item.get("seqs")
        named = {seq for seq in seqs if seq in useful} if isinstance(seqs, list) else set()
        named = named or useful  # a memory that names no judged message covers them all
        drafts.append(
            Candidate(
                content=fallback.cap_at_sentence(content, limit),
                first_seq=min(named),
                last_seq=max(named),
            )
        )
    return drafts


def _similar_entries(thread, content: str) -> list:
    """Return the thread's scope's entries closest to content, pending ones included."""
    project_id = thread.agent.project_id
    scope = Scope(
        kind="entry",
        project_id=project_id,
        agent_id=thread.agent_id,
        resource_id=thread.resource_id,
        without_resource=thread.resource_id is None,
        visible_only=False,
    )
    vector = query_vector(project_id=project_id, query=content)
    hits = search(scopes=[scope], query=content, top_k=SIMILAR_SHOWN, vector=vector)
    return [hit.item.entry for hit in hits if hit.item.entry_id]


def _publish(thread, after, batch, candidates, method, chat, report: ThreadReport) -> bool:
    """Claim the batch's range and store its entries in one transaction; False if taken."""
    first, last = batch[0].seq, batch[-1].seq
    version = _LLM_VERSION if method == "llm" else fallback.VERSION
    contents = [candidate.content for candidate in candidates]
    ahead = entries_embedded_ahead(agent=thread.agent, resource=thread.resource, contents=contents)
    with ahead, transaction.atomic():
        claimed = ConsolidationProgress.objects.filter(
            thread=thread, consolidated_up_to=after
        ).update(consolidated_up_to=last, updated_at=timezone.now())
        if not claimed:
            return False
        created = duplicates = 0
        kept_seqs = set()
        for candidate in candidates:
            # entry_create's similarity check embeds from what entries_embedded_ahead embedded
            # before the transaction began: the write lock is not held while an embedder works.
            try:
                result = entry_create(
                    agent=thread.agent,
                    resource=thread.resource,
                    content=candidate.content,
                    source=EntrySource.CONSOLIDATION,
                    evidence=candidate.evidence,
                    thread=thread,
                    message=candidate.message,
                    kind=EntryKind.CONSOLIDATED,
                    supersedes=candidate.supersedes,
                    metadata={
                        "first_seq": candidate.first_seq,
                        "last_seq": candidate.last_seq,
                        "method": method,
                        "prompt_version": version,
                        "model": chat.model if method == "llm" else "",
                    }
                    | (
                        {"repeated_at": list(candidate.repeated_at)}
                        if candidate.repeated_at
                        else {}
                    ),
                    actor=ACTOR,
                )
            except ApplicationError as error:
                logger.warning("consolidated entry of thread %s refused: %s", thread.pk, error)
                continue
            created += result.created
            duplicates += not result.created
            kept_seqs.update(range(candidate.first_seq, candidate.last_seq + 1))
            kept_seqs.update(candidate.repeated_at)
        ConsolidationProgress.objects.filter(thread=thread).update(
            entries_made=F("entries_made") + created
        )
    report.first_seq = report.first_seq or first
    report.last_seq = last
    report.messages += len(batch)
    report.created += created
    report.duplicates += duplicates
    report.skipped += sum(1 for message in batch if message.seq not in kept_seqs)
    report.methods.add(method)
    return True
