"""The Observer: compress a thread's oldest unobserved messages into observations."""

import logging
import re

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from apps.observations import extractive
from apps.observations.chunks import message_chunks
from apps.observations.condense import condense_keeping
from apps.observations.failures import failure_record
from apps.observations.models import Method, Observation, ObservationProgress, Stage
from apps.observations.prompts import observer as prompt
from apps.providers.answers import answer_problem
from apps.providers.llm import ChatModel, LLMError, LLMOutputError
from apps.providers.tokens import count_tokens
from apps.providers.transcript import render_messages

logger = logging.getLogger(__name__)

# Work starts at this share of a threshold, so it is done before a request would need it.
BUFFER_RATIO = 0.8
_UNCUT = 10**9
# What an extractive line starts with: its seq reference ([#12], [#4–5]) and maybe the time of
# its first message ((2026-11-27 12:17)): a pointer, not a fact an answer must repeat.
_SEQ_REF = re.compile(
    rf"^\[{extractive.SEQ_REFS}\] "
    r"(?:\(\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(?::\d{2})?(?:[–-][^)]*)?\) )?",
    re.MULTILINE,
)


def answer_checked(answer: str, *, chunk, before: str = "", model: str) -> str:
    """Return a model's observations or summary of chunk if it may stand for it; else raise.

    What the answer must keep is what the extractive digest of chunk keeps (identifiers whole,
    every error) and what `before` (a summary it rolls forward) holds; it must be shorter than
    `before` and the messages together (apps.providers.answers).
    """
    facts = _SEQ_REF.sub("", f"{before}\n{extractive.messages_digest(chunk)}")
    shown = render_messages(chunk, max_chars=_UNCUT)  # the messages as the prompt shows them
    problem = answer_problem(facts, answer, source_length=len(before) + len(shown))
    if problem:
        raise LLMOutputError(f"model {model}: {problem}")
    return answer


def progress_get(*, thread) -> ObservationProgress:
    progress, _ = ObservationProgress.objects.get_or_create(thread=thread)
    return progress


def observer_due(
    *, total_tokens: int, last_seq: int, observed_up_to: int, observed_tokens: int, config
) -> bool:
    """Whether unobserved tokens near the threshold and messages outside the window wait."""
    boundary = last_seq - config["recent_window"]
    unobserved = total_tokens - observed_tokens
    return (
        boundary > observed_up_to and unobserved >= BUFFER_RATIO * config["observer_message_tokens"]
    )


def thread_observe(*, thread, config, chat: ChatModel | None) -> list[Observation]:
    """Observe every message older than the recent window; return the observations published.

    1. Read how far the thread is observed (K) and its recent window's first seq (last_seq −
       recent_window + 1): messages from there on are left alone. Do nothing unless the
       unobserved tokens reach BUFFER_RATIO of observer_message_tokens.
    2. Take the messages K+1… up to the window in chunks of at most observer_message_tokens
       (a larger message is a chunk alone).
    3. Compute a chunk's observations with the model; when there is none, or it fails, answers
       nothing usable, or an answer that drops a fact of the chunk or does not condense it
       (answer_checked), with the extractive digest (the failure is recorded).
    4. Publish atomically: move K from the chunk's start to its end with a conditional UPDATE,
       then store the row. If K had moved, another job observed this range first: stop.
    """
    progress = progress_get(thread=thread)
    if not observer_due(
        total_tokens=thread.token_count,
        last_seq=thread.last_seq,
        observed_up_to=progress.observed_up_to,
        observed_tokens=progress.observed_message_tokens,
        config=config,
    ):
        return []
    published = []
    chunks = message_chunks(
        thread=thread,
        after_seq=progress.observed_up_to,
        up_to_seq=thread.last_seq - config["recent_window"],
        max_tokens=config["observer_message_tokens"],
    )
    for chunk in chunks:
        content, method = _observe(thread, chunk, chat, progress.generation)
        observation = _publish(thread, chunk, content, method, chat)
        if observation is None:
            break
        published.append(observation)
        progress.generation = observation.generation
    return published


def _observe(thread, chunk, chat, generation) -> tuple[str, str]:
    if chat is not None:
        try:
            answer = chat.complete_json(
                prompt.observer_prompt(chunk), required_keys=("observations",)
            )
            text = _observations_text(answer, chat.model)
            return answer_checked(text, chunk=chunk, model=chat.model), Method.LLM
        except LLMError as error:
            logger.warning("observer of thread %s fell back to extraction: %s", thread.pk, error)
            failure_record(
                thread=thread,
                stage=Stage.OBSERVER,
                generation=generation,
                first_seq=chunk[0].seq,
                last_seq=chunk[-1].seq,
                model=chat.model,
                prompt_version=prompt.VERSION,
                error=error,
                outcome="extractive observations stored instead",
            )
    return extractive_observations(chunk), Method.EXTRACTIVE


def extractive_observations(chunk) -> str:
    """The chunk's extractive digest, condensed as a reflection is (condense.py: repeats
    merged, one tool's successful calls grouped, a reply on the line it answers, replies that
    name nothing dropped), unless condensing would lose a fact of it."""
    digest = extractive.messages_digest(chunk)
    return condense_keeping([digest]) or digest


def _observations_text(answer: dict, model: str) -> str:
    items = answer["observations"]
    if isinstance(items, str):
        items = [items]
    if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
        raise LLMOutputError(f"model {model} answered observations that are not a list of strings")
    text = "\n".join(item.strip() for item in items if item.strip())
    if not text:
        raise LLMOutputError(f"model {model} answered no observations")
    return text


def _publish(thread, chunk, content: str, method: str, chat) -> Observation | None:
    first, last = chunk[0].seq, chunk[-1].seq
    message_tokens = sum(message.token_count for message in chunk)
    with transaction.atomic():
        progress = ObservationProgress.objects.filter(thread=thread, observed_up_to=first - 1)
        claimed = progress.update(
            observed_up_to=last,
            observed_message_tokens=F("observed_message_tokens") + message_tokens,
            updated_at=timezone.now(),
        )
        if not claimed:
            return None
        generation = ObservationProgress.objects.get(thread=thread).generation
        return Observation.objects.create(
            thread=thread,
            generation=generation,
            first_seq=first,
            last_seq=last,
            content=content,
            tokens=count_tokens(content),
            message_tokens=message_tokens,
            method=method,
            model=chat.model if method == Method.LLM else "",
            prompt_version=prompt.VERSION if method == Method.LLM else extractive.PROMPT_VERSION,
        )
