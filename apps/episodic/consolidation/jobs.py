"""When consolidation runs: the scheduled sweep, the per-thread job, and a run on demand."""

from datetime import timedelta

from celery import shared_task
from django.db.models import F, Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from apps.core.errors import NotFound
from apps.episodic.consolidation.batches import ThreadReport, thread_consolidate
from apps.jobs.registry import job_handler
from apps.jobs.services import job_enqueue
from apps.memconfig.selectors import config_effective
from apps.providers.llm import chat_model_for
from apps.tenancy.models import Agent
from apps.threads.models import Thread
from apps.threads.selectors import thread_for_operator

JOB_KIND = "episodic.consolidate"


def consolidation_enqueue_due(*, now=None) -> int:
    """Queue one consolidation job per thread that is due; return how many threads were due.

    A thread is due when more than its agent's short_term_limit messages follow its last
    consolidated seq and its agent's consolidation_interval_seconds have passed since its last
    run. Settings differ per agent, so the filter runs once per agent (config cached per
    process), in the query: threads that are not due are never loaded. A job already pending
    for a thread is reused.
    """
    now = now or timezone.now()
    due = 0
    for agent in Agent.objects.order_by("created_at", "id").iterator():
        config = config_effective(agent=agent)
        since = now - timedelta(seconds=config["consolidation_interval_seconds"])
        thread_ids = (
            Thread.objects.filter(agent=agent)
            .annotate(done=Coalesce("consolidation__consolidated_up_to", 0))
            .filter(last_seq__gt=F("done") + config["short_term_limit"])
            .filter(
                Q(consolidation__last_run_at__isnull=True)
                | Q(consolidation__last_run_at__lte=since)
            )
            .order_by()
            .values_list("id", flat=True)
        )
        for thread_id in thread_ids.iterator():
            job_enqueue(kind=JOB_KIND, key=str(thread_id), payload={"thread_id": str(thread_id)})
            due += 1
    return due


def thread_consolidate_now(*, thread) -> ThreadReport:
    """Consolidate the thread as its agent's config says, whatever its interval."""
    config = config_effective(agent=thread.agent)
    chat = chat_model_for(config["observer_model"])
    return thread_consolidate(thread=thread, config=config, chat=chat)


@job_handler(JOB_KIND)
def run_thread_consolidate(job):
    try:
        thread = thread_for_operator(thread_id=job.payload["thread_id"])
    except NotFound:
        return  # the thread was deleted after the job was queued
    thread_consolidate_now(thread=thread)


@shared_task(ignore_result=True)
def consolidation_sweep() -> None:
    consolidation_enqueue_due()
