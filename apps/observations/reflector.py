"""The Reflector: condense a thread's active observations into one reflection, a new generation."""

import logging

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from apps.observations import extractive
from apps.observations.chunks import message_chunks
from apps.observations.condense import condense, condense_keeping
from apps.observations.failures import failure_record
from apps.observations.models import (
    Method,
    Observation,
    ObservationProgress,
    Stage,
)
from apps.observations.observer import BUFFER_RATIO, progress_get
from apps.observations.prompts import reflector as prompt
from apps.providers.llm import ChatModel, LLMError, LLMOutputError
from apps.providers.tokens import count_tokens

logger = logging.getLogger(__name__)

# New observations since the last reflection must hold this share of the threshold before the
# next one: a reflection that could not condense much is not redone at every new observation.
FRESH_RATIO = 0.5
# Messages read at a time to find the identifiers a reflection must keep.
_DIGEST_CHUNK_TOKENS = 50_000


# What a failed or refused model reflection is replaced by: the rules' (condense.py).
TAKEN_OVER = "extractive reflection stored instead"


class _Superseded(Exception):
    """Another job changed the active set while this reflection was being computed."""


def thread_reflect(*, thread, config, chat: ChatModel | None) -> Observation | None:
    """Replace the active observations by one reflection when they grow too large; return it.

    1. Read the active set S (superseded_by null, ordered by first_seq) and the generation G.
       Reflect when S holds BUFFER_RATIO of reflector_observation_tokens, has two rows or more,
       and FRESH_RATIO of the threshold came from observations newer than the last reflection.
    2. Compute the reflection: the model's, or without a model the rules' (condense.py). A
       failed, cut, refused, empty or malformed answer is recorded and the rules' reflection
       takes its place.
    3. Check it: every identifier (ids, URLs, file names, numbers) of S and of the uncut digest
       of the messages S covers must be in it (an observation may hold one cut short), and
       every error line and decision in substance (extractive.essentials_dropped), and it must
       be shorter than S, or the rules' reflection takes its place (recorded).
    4. Publish atomically: move the generation from G to G+1 with a conditional UPDATE, store
       the reflection (G+1, seq 1…last of S) and point every row of S at it. If G had moved or a
       row of S was superseded meanwhile, another job reflected first: roll back.
    """
    active = list(
        Observation.objects.filter(thread=thread, superseded_by__isnull=True).order_by("first_seq")
    )
    generation = progress_get(thread=thread).generation
    if not _due(active, config):
        return None
    sources = [observation.content for observation in active]
    if chat is None:
        content, method = _condensed(thread, active, generation, sources)
    else:
        try:
            content, method = _reflect(chat, sources), Method.LLM
        except LLMError as error:
            _record(thread, active, generation, chat, error, TAKEN_OVER)
            content, method = _condensed(thread, active, generation, sources)
            return _published(thread, active, generation, content, method, chat)
        text = "\n".join(sources)
        required = extractive.identifiers_in(text) | _covered_identifiers(thread, active)
        missing = {token for token in required if "…" not in token}
        missing -= extractive.identifiers_in(content)
        dropped = extractive.essentials_dropped(text, content)
        longer = len(content) >= len(text)
        if missing or dropped or longer:
            shown = "; ".join(
                [", ".join(sorted(missing)[:20])] * bool(missing)
                + [f"the line {line[:120]!r}" for line in dropped[:5]]
                + [f"nothing: it is not shorter than its sources ({len(text)} characters)"] * longer
            )
            _record(thread, active, generation, chat, f"the reflection dropped {shown}", TAKEN_OVER)
            content, method = _condensed(thread, active, generation, sources)
    return _published(thread, active, generation, content, method, chat)


def _published(thread, active, generation, content, method, chat) -> Observation | None:
    try:
        return _publish(thread, active, generation, content, method, chat)
    except _Superseded:
        return None


def _condensed(thread, active, generation, sources: list[str]) -> tuple[str, str]:
    """The sources condensed without a model (condense.py), or merged when condensing would
    drop an identifier, an error or a decision of theirs (recorded)."""
    content = condense_keeping(sources)
    if content is not None:
        return content, Method.EXTRACTIVE
    text, merged = "\n".join(sources), condense(sources)
    missing = extractive.identifiers_in(text) - extractive.identifiers_in(merged)
    dropped = extractive.essentials_dropped(text, merged)
    why = f"{len(missing)} identifier(s) and {len(dropped)} line(s) would go"
    error = f"the extractive reflection was not kept: {why}"
    _record(thread, active, generation, None, error, "sources concatenated instead")
    return extractive.observations_merge(sources), Method.CONCATENATED


def _covered_identifiers(thread, active) -> set[str]:
    """Return the identifiers of the extractive digest of the messages S covers, uncut."""
    found: set[str] = set()
    chunks = message_chunks(
        thread=thread,
        after_seq=active[0].first_seq - 1,
        up_to_seq=active[-1].last_seq,
        max_tokens=_DIGEST_CHUNK_TOKENS,
    )
    for chunk in chunks:
        found |= extractive.identifiers_in(extractive.messages_digest(chunk))
    return found


def _due(active, config) -> bool:
    threshold = config["reflector_observation_tokens"]
    total = sum(row.tokens for row in active)
    fresh = sum(row.tokens for row in active if not row.is_reflection)
    return (
        len(active) >= 2 and total >= BUFFER_RATIO * threshold and fresh >= FRESH_RATIO * threshold
    )


def _reflect(chat: ChatModel, sources: list[str]) -> str:
    answer = chat.complete_json(prompt.reflector_prompt(sources), required_keys=("reflection",))
    reflection = answer["reflection"]
    if not isinstance(reflection, str):
        raise LLMOutputError(f"model {chat.model} answered a reflection that is not text")
    if not reflection.strip():
        raise LLMOutputError(f"model {chat.model} answered an empty reflection")
    return reflection.strip()


def _record(thread, active, generation, chat, error, outcome) -> None:
    """Record a reflection that was not kept: the model's (chat), or the rules' (None)."""
    logger.warning("reflector of thread %s: %s; %s", thread.pk, error, outcome)
    failure_record(
        thread=thread,
        stage=Stage.REFLECTOR,
        generation=generation,
        first_seq=active[0].first_seq,
        last_seq=active[-1].last_seq,
        model=chat.model if chat else "",
        prompt_version=prompt.VERSION if chat else extractive.PROMPT_VERSION,
        error=error,
        outcome=outcome,
    )


def _publish(thread, active, generation, content, method, chat) -> Observation:
    with transaction.atomic():
        claimed = ObservationProgress.objects.filter(thread=thread, generation=generation).update(
            generation=F("generation") + 1, updated_at=timezone.now()
        )
        if not claimed:
            raise _Superseded
        reflection = Observation.objects.create(
            thread=thread,
            generation=generation + 1,
            first_seq=active[0].first_seq,
            last_seq=active[-1].last_seq,
            content=content,
            tokens=count_tokens(content),
            message_tokens=sum(row.message_tokens for row in active),
            is_reflection=True,
            method=method,
            model=chat.model if method == Method.LLM else "",
            prompt_version=prompt.VERSION if method == Method.LLM else extractive.PROMPT_VERSION,
        )
        replaced = Observation.objects.filter(
            pk__in=[row.pk for row in active], superseded_by__isnull=True
        ).update(superseded_by=reflection, updated_at=timezone.now())
        if replaced != len(active):
            raise _Superseded  # leaves the atomic block: nothing of this reflection stays
    return reflection
