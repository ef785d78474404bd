"""Consolidate one thread: its messages past the short-term window, batch by batch.

Each batch is judged by the model (consolidation.model) or, without one or when it fails, by
the extractive rules (consolidation.extractive), then published: the thread's progress moves
past the batch and its entries are stored in one transaction.
"""

import logging
from dataclasses import dataclass, field

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from apps.core.errors import ApplicationError
from apps.episodic.consolidation import fallback
from apps.episodic.consolidation.dedupe import KnownEntries
from apps.episodic.consolidation.extractive import batch_keep
from apps.episodic.consolidation.model import LLM_VERSION, batch_judge_with_model
from apps.episodic.models import ConsolidationProgress, EntryKind, EntrySource
from apps.episodic.services import entries_embedded_ahead, entry_create
from apps.providers.failures import model_failure_report
from apps.providers.llm import ChatModel, LLMError

logger = logging.getLogger(__name__)
ACTOR = "consolidation"
# Messages judged per model round and per transaction: small enough that a crash loses little
# work and a prompt stays short, large enough that the three calls are not made per message.
BATCH_MESSAGES = 25


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
            candidates = batch_judge_with_model(
                thread=thread, batch=batch, config=config, chat=chat, candidate=Candidate
            )
            return candidates, "llm", 0, 0
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
                prompt_version=LLM_VERSION,
                error=error,
                outcome="extractive consolidation stored instead",
            )
    candidates, merged, known_before = batch_keep(
        thread=thread, batch=batch, config=config, known=known, candidate=Candidate
    )
    return candidates, "extractive", merged, known_before


def _publish(thread, after, batch, candidates, method, chat, report: ThreadReport) -> bool:
    """Claim the batch's range and store its entries in one transaction; False if taken."""
    first, last = batch[0].seq, batch[-1].seq
    version = LLM_VERSION if method == "llm" else fallback.VERSION
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
