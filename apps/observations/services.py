"""Keep a thread's observational memory or compaction summary up to date, in the background.

The append hook only decides whether work is due (one row read) and queues one job per thread;
the job does the work as the agent's `context_strategy` says:
  observational — the Observer, then the Reflector;
  compaction    — the rolling summary;
  none          — nothing.
"""

from dataclasses import dataclass

from apps.jobs.services import job_enqueue
from apps.memconfig.selectors import config_effective
from apps.observations.compaction import compaction_due, thread_compact
from apps.observations.models import ObservationProgress, ThreadSummary
from apps.observations.observer import observer_due, thread_observe
from apps.observations.reflector import thread_reflect
from apps.providers.endpoint import NO_ENDPOINT_REASON, endpoint_configured
from apps.providers.llm import chat_model_for

JOB_KIND = "observations.update"


class Strategy:
    OBSERVATIONAL = "observational"
    COMPACTION = "compaction"
    NONE = "none"


@dataclass(frozen=True)
class MemoryWork:
    """Who writes the agent's observations, reflections and summaries."""

    strategy: str
    path: str  # "llm", "extractive" (the offline rules) or "off"
    model: str
    reason: str  # why the model does not do it ("" when it does)


def memory_work_state(*, config) -> MemoryWork:
    """Say whether the observer_model or the extractive fallback does the agent's memory work.

    The same test as chat_model_for(): a model name and a configured endpoint. Consolidation
    takes the same model by the same test, whatever the strategy.
    """
    strategy, model = config["context_strategy"], config["observer_model"]
    if strategy == Strategy.NONE:
        return MemoryWork(strategy, "off", model, "context_strategy is none")
    if not endpoint_configured():
        return MemoryWork(strategy, "extractive", model, NO_ENDPOINT_REASON)
    if not model:
        return MemoryWork(strategy, "extractive", model, "no model: set observer_model")
    return MemoryWork(strategy, "llm", model, "")


def observations_enqueue_if_due(*, thread, messages) -> None:
    """Queue the thread's update job when its new messages bring work near a threshold.

    Called inside the append's transaction, before the thread's counters are reloaded: its
    token_count does not include the new messages yet.
    """
    config = config_effective(agent=thread.agent)
    strategy = config["context_strategy"]
    if strategy == Strategy.NONE or not messages:
        return
    total = thread.token_count + sum(message.token_count for message in messages)
    last_seq = max(message.seq for message in messages)
    if strategy == Strategy.OBSERVATIONAL:
        observed = (
            ObservationProgress.objects.filter(thread_id=thread.pk)
            .values_list("observed_up_to", "observed_message_tokens")
            .first()
        ) or (0, 0)
        due = observer_due(
            total_tokens=total,
            last_seq=last_seq,
            observed_up_to=observed[0],
            observed_tokens=observed[1],
            config=config,
        )
    else:
        summary = ThreadSummary.objects.filter(thread_id=thread.pk).order_by("-version").first()
        due = compaction_due(total_tokens=total, last_seq=last_seq, summary=summary, config=config)
    if due:
        job_enqueue(kind=JOB_KIND, key=str(thread.pk), payload={"thread_id": str(thread.pk)})


def observations_update(*, thread) -> None:
    """Do the thread's due work as its agent's context_strategy says (idempotent by range)."""
    config = config_effective(agent=thread.agent)
    strategy = config["context_strategy"]
    if strategy == Strategy.NONE:
        return
    chat = chat_model_for(config["observer_model"])
    if strategy == Strategy.OBSERVATIONAL:
        thread_observe(thread=thread, config=config, chat=chat)
        thread_reflect(thread=thread, config=config, chat=chat)
    elif strategy == Strategy.COMPACTION:
        thread_compact(thread=thread, config=config, chat=chat)
