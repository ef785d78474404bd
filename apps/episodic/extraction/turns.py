"""Extract one turn: claim it, read it, ask the model, check what it proposes, store the rest.

A turn is the messages after the previous assistant answer, up to the answer that closes it.
The model's prompt is seed 003 "Extract"; its proposals are checked by extraction.proposals.
"""

import logging
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from apps.core.errors import ApplicationError
from apps.episodic.extraction.proposals import cap_at_sentence, proposal_check
from apps.episodic.models import (
    LIVE_STATUSES,
    EntryKind,
    ExtractionRun,
    ExtractionStatus,
    MemoryEntry,
)
from apps.episodic.prompts import extraction as prompt
from apps.episodic.services import entry_create
from apps.memconfig.selectors import config_effective
from apps.profiles.selectors import profile_get
from apps.providers.answers import identifiers_dropped
from apps.providers.endpoint import NO_ENDPOINT_REASON, endpoint_configured
from apps.providers.failures import model_failure_report
from apps.providers.llm import ChatModel, LLMError, LLMOutputError, chat_model_for
from apps.threads.models import Kind, Message, Role

logger = logging.getLogger(__name__)
# The newest messages of a turn sent to the model: a 300-step tool loop is one turn, and the
# answer that closes it is what the turn's entries are mostly about.
TURN_MESSAGES = 40
# Known entries of the scope sent for dedupe and `supersedes`, newest first.
KNOWN_ENTRIES = 30


class ExtractionBusy(Exception):
    """Another worker is extracting this turn right now."""


@dataclass(frozen=True)
class ExtractionState:
    enabled: bool
    model: str
    reason: str  # why it is off ("" when on)


def extraction_state(*, agent=None, config=None) -> ExtractionState:
    """Whether extraction runs for the agent, with which model, or why it does not."""
    config = config if config is not None else config_effective(agent=agent)
    model = config["extraction_model"] or config["observer_model"]
    if not config["episodic_extraction_enabled"]:
        return ExtractionState(False, model, "episodic_extraction_enabled is off")
    if not endpoint_configured():
        return ExtractionState(False, model, NO_ENDPOINT_REASON)
    if not model:
        return ExtractionState(False, model, "no model: set extraction_model or observer_model")
    return ExtractionState(True, model, "")


def turn_extract(*, thread, last_seq: int, job_id=None) -> ExtractionRun | None:
    """Extract the turn that the answer at last_seq closes; return its run (None: extraction
    is off).

    1. Claim the turn: one run per (thread, last_seq). A finished run means the turn was
       extracted already, so a repeated job stores nothing new; a run another worker holds is
       left to it (ExtractionBusy: the job retries later); a failed one, or one whose worker
       died, is taken over (entries it stored are found again by their hash).
    2. Read the turn: the messages after the previous assistant answer, up to last_seq.
    3. Ask the model, with the turn as role-labelled JSON and what is known (profile, entries).
    4. Check every proposal: its shape, its source label, its evidence verbatim in a message
       of the right role. The rest are rejected, counted with their reason, never stored.
    5. Keep the first episodic_max_entries_per_turn; cap each at episodic_max_entry_length,
       cut at a sentence boundary.
    6. Store each through entry_create: exact-hash and similarity dedupe, pending unless
       approval is off, indexed and embedded, with the run as provenance.
    7. Record the counts on the run.
    """
    config = config_effective(agent=thread.agent)
    state = extraction_state(config=config)
    chat = chat_model_for(state.model) if state.enabled else None
    if chat is None:
        return None
    run = _claim(thread, last_seq, chat.model, job_id)
    if run is None:
        # Another worker holds the turn. Fail this attempt so the job looks again later: done
        # by then, it finds the run finished; if that worker died, it takes the run over.
        raise ExtractionBusy(f"turn #{last_seq} of thread {thread.pk} is being extracted")
    if run.status == ExtractionStatus.DONE:
        return run
    turn = _turn_messages(thread, last_seq)
    run.first_seq = turn[0].seq if turn else last_seq
    try:
        proposals = _ask(chat, thread, turn)
    except LLMOutputError as error:  # malformed, cut, refused or empty: nothing stored
        proposals = []
        _reject(run, "", f"malformed answer: {error}")
        _report(run, thread, error, "nothing extracted from this turn; consolidation reads it")
    except LLMError as error:
        run.status, run.error = ExtractionStatus.FAILED, str(error)[:2000]
        run.save()
        _report(run, thread, error, "the job retries the turn")
        raise  # the job retries a failed call; the next attempt takes the run over
    _store(run, thread, turn, proposals, config)
    run.status = ExtractionStatus.DONE
    run.save()
    return run


def _claim(thread, last_seq, model, job_id) -> ExtractionRun | None:
    fields = {"agent": thread.agent, "model": model, "prompt_version": prompt.VERSION}
    try:
        with transaction.atomic():
            return ExtractionRun.objects.create(
                thread=thread, first_seq=last_seq, last_seq=last_seq, job_id=job_id, **fields
            )
    except IntegrityError:
        pass
    run = ExtractionRun.objects.get(thread=thread, last_seq=last_seq)
    if run.status == ExtractionStatus.DONE:
        return run
    stale = timezone.now() - timedelta(seconds=settings.JOB_LEASE_SECONDS)
    taken = ExtractionRun.objects.filter(pk=run.pk, status=run.status, updated_at=run.updated_at)
    if run.status == ExtractionStatus.RUNNING and run.updated_at > stale:
        return None  # another worker is on it
    if not taken.update(status=ExtractionStatus.RUNNING, job_id=job_id, updated_at=timezone.now()):
        return None  # another worker took it over first
    run.refresh_from_db()
    for name, value in fields.items():
        setattr(run, name, value)
    run.proposed = run.stored = run.duplicates = run.rejected = run.over_cap = 0
    run.rejections, run.error = [], ""
    return run


def _turn_messages(thread, last_seq: int) -> list[Message]:
    messages = Message.objects.filter(thread=thread)
    previous = messages.filter(role=Role.ASSISTANT, kind=Kind.MESSAGE, seq__lt=last_seq).aggregate(
        seq=Max("seq")
    )["seq"]
    newest = messages.filter(seq__gt=previous or 0, seq__lte=last_seq).order_by("-seq")
    return list(reversed(newest[:TURN_MESSAGES]))


def _ask(chat: ChatModel, thread, turn) -> list:
    # The profile is shown so that entries do not repeat it; it is never a source of one.
    found = (
        profile_get(agent=thread.agent, resource=thread.resource) if thread.resource_id else None
    )
    profile = found.content if found else ""
    known = (
        MemoryEntry.objects.filter(
            agent=thread.agent, resource=thread.resource, status__in=LIVE_STATUSES
        )
        .order_by("-created_at", "-id")
        .values_list("id", "content")[:KNOWN_ENTRIES]
    )
    messages = prompt.extraction_prompt(
        turn, profile=profile, memory=[(str(pk), content) for pk, content in known]
    )
    answer = chat.complete_json(messages, required_keys=("entries",))
    if not isinstance(answer["entries"], list):
        raise LLMOutputError(f"model {chat.model} answered entries that are not a list")
    return answer["entries"]


def _store(run, thread, turn, proposals, config) -> None:
    limit = config["episodic_max_entries_per_turn"]
    run.proposed += len(proposals)
    accepted = []
    for raw in proposals:
        checked = proposal_check(raw, turn, thread=thread)
        if not isinstance(checked, str) and (
            lost := identifiers_dropped(checked.evidence, checked.content)
        ):
            # An entry must keep the ids, numbers and addresses of the words it quotes.
            checked = f"content drops {', '.join(lost[:10])} of its evidence"
        if isinstance(checked, str):
            _reject(run, raw.get("source") if isinstance(raw, dict) else "", checked)
        elif len(accepted) >= limit:
            run.over_cap += 1
        else:
            accepted.append(checked)
    actor = f"extraction:{run.model}"
    for proposal in accepted:
        try:
            result = entry_create(
                agent=thread.agent,
                resource=thread.resource,
                content=cap_at_sentence(proposal.content, config["episodic_max_entry_length"]),
                source=proposal.source,
                evidence=proposal.evidence,
                thread=thread,
                message=proposal.message,
                kind=EntryKind.EPISODIC,
                actor=actor,
                supersedes=proposal.supersedes,
                extraction=run,
            )
        except ApplicationError as error:  # checked above; the message may have changed since
            _reject(run, proposal.source, error.message)
            continue
        if result.created:
            run.stored += 1
        else:
            run.duplicates += 1


def _report(run, thread, error, outcome: str) -> None:
    model_failure_report(
        thread=thread,
        stage="extraction",
        first_seq=run.first_seq,
        last_seq=run.last_seq,
        model=run.model,
        prompt_version=run.prompt_version,
        error=error,
        outcome=outcome,
    )


def _reject(run, source, reason: str) -> None:
    run.rejected += 1
    run.rejections.append({"source": str(source or "")[:60], "reason": reason[:300]})
