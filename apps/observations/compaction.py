"""Rolling compaction: fold a thread's older messages into a versioned summary."""

import logging
import re

from django.db import IntegrityError, transaction

from apps.observations import extractive
from apps.observations.chunks import message_chunks
from apps.observations.condense import condense_within
from apps.observations.failures import failure_record
from apps.observations.models import Method, Stage, ThreadSummary
from apps.observations.observer import BUFFER_RATIO, answer_checked
from apps.observations.prompts import compaction as prompt
from apps.providers.llm import ChatModel, LLMError, LLMOutputError
from apps.providers.tokens import count_tokens

logger = logging.getLogger(__name__)

# The line an extractive summary ends with when the budget left entries out.
_LEFT_OUT = "({count} older entries left out to stay within the budget; search finds them)"
_LEFT_OUT_LINE = re.compile(r"\n?\((\d+) older entries left out [^\n]*\)$")


def compaction_due(
    *, total_tokens: int, last_seq: int, summary: ThreadSummary | None, config
) -> bool:
    """Whether the estimate nears the budget and messages outside the window can be folded."""
    covered, covered_tokens, summary_tokens = (
        (summary.covers_up_to_seq, summary.message_tokens, summary.tokens) if summary else (0, 0, 0)
    )
    estimate = total_tokens - covered_tokens + summary_tokens
    boundary = last_seq - config["recent_window"]
    return boundary > covered and estimate >= BUFFER_RATIO * config["compaction_budget_tokens"]


def thread_compact(*, thread, config, chat: ChatModel | None) -> list[ThreadSummary]:
    """Fold the messages older than the recent window into the summary; return new versions.

    1. Read the latest summary (covering 1…c) and estimate the thread as what a context would
       hold: the summary plus every message after c. Do nothing below BUFFER_RATIO of
       compaction_budget_tokens.
    2. Take the messages c+1… up to the recent window in chunks of at most half the budget.
    3. Compute the next summary from the last one and the chunk: the model's, or when there is
       none, it fails, or its answer drops a fact of either or does not condense them
       (observer.answer_checked; recorded), the extractive summary.
    4. Publish: store version v+1. The (thread, version) constraint is the claim: if another
       job stored v+1 first, stop. Raw messages are never touched.
    """
    summary = ThreadSummary.objects.filter(thread=thread).order_by("-version").first()
    if not compaction_due(
        total_tokens=thread.token_count, last_seq=thread.last_seq, summary=summary, config=config
    ):
        return []
    published = []
    chunks = message_chunks(
        thread=thread,
        after_seq=summary.covers_up_to_seq if summary else 0,
        up_to_seq=thread.last_seq - config["recent_window"],
        max_tokens=max(1, config["compaction_budget_tokens"] // 2),
    )
    for chunk in chunks:
        content, method = _summarise(
            thread, summary, chunk, chat, config["compaction_budget_tokens"]
        )
        summary = _publish(thread, summary, chunk, content, method, chat)
        if summary is None:
            break
        published.append(summary)
    return published


def _summarise(thread, summary, chunk, chat, budget: int) -> tuple[str, str]:
    previous = summary.content if summary else ""
    if chat is not None:
        try:
            answer = chat.complete_json(
                prompt.compaction_prompt(previous, chunk), required_keys=("summary",)
            )
            text = answer["summary"]
            if not isinstance(text, str) or not text.strip():
                raise LLMOutputError(f"model {chat.model} answered an empty or non-text summary")
            checked = answer_checked(text.strip(), chunk=chunk, before=previous, model=chat.model)
            return checked, Method.LLM
        except LLMError as error:
            logger.warning("compaction of thread %s fell back to extraction: %s", thread.pk, error)
            failure_record(
                thread=thread,
                stage=Stage.COMPACTION,
                generation=(summary.version if summary else 0) + 1,
                first_seq=chunk[0].seq,
                last_seq=chunk[-1].seq,
                model=chat.model,
                prompt_version=prompt.VERSION,
                error=error,
                outcome="extractive summary stored instead",
            )
    return _extractive_summary(previous, chunk, budget), Method.EXTRACTIVE


def _extractive_summary(previous: str, chunk, budget: int) -> str:
    """The last summary and the chunk's digest condensed (condense.py) and fitted to budget:
    what must go goes oldest and least important first (replies, tool runs, statements, then
    requests, errors and decisions), and the summary says how many entries it left out (the
    messages stay, and recall finds them)."""
    digest = extractive.messages_digest(chunk)
    earlier = 0
    if found := _LEFT_OUT_LINE.search(previous):
        earlier, previous = int(found.group(1)), previous[: found.start()]
    note = count_tokens(_LEFT_OUT.format(count=999_999)) + 1
    content, dropped = condense_within([previous, digest], max(0, budget - note))
    if dropped + earlier:
        content = f"{content}\n{_LEFT_OUT.format(count=dropped + earlier)}".strip()
    return content


def _publish(thread, summary, chunk, content, method, chat) -> ThreadSummary | None:
    try:
        with transaction.atomic():
            return ThreadSummary.objects.create(
                thread=thread,
                version=(summary.version if summary else 0) + 1,
                content=content,
                tokens=count_tokens(content),
                covers_up_to_seq=chunk[-1].seq,
                message_tokens=(summary.message_tokens if summary else 0)
                + sum(message.token_count for message in chunk),
                method=method,
                model=chat.model if method == Method.LLM else "",
                prompt_version=prompt.VERSION
                if method == Method.LLM
                else extractive.PROMPT_VERSION,
            )
    except IntegrityError:
        return None  # another job stored this version first
