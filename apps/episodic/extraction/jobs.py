"""When extraction runs: one job per turn an assistant answer closes, queued after the append."""

from apps.core.errors import NotFound
from apps.episodic.extraction.turns import extraction_state, turn_extract
from apps.episodic.models import ExtractionRun
from apps.jobs.registry import job_handler
from apps.jobs.services import job_enqueue, job_progress
from apps.threads.models import Kind, Role
from apps.threads.selectors import thread_for_operator

JOB_KIND = "episodic.extraction"


def extraction_enqueue(*, thread, messages) -> None:
    """Queue one extraction per turn that an assistant answer in messages closes."""
    closing = [
        message
        for message in messages
        if message.role == Role.ASSISTANT and message.kind == Kind.MESSAGE and message.content
    ]
    if not closing or not extraction_state(agent=thread.agent).enabled:
        return
    for message in closing:
        # Keyed by the turn: a repeated notification queues the same job once.
        job_enqueue(
            kind=JOB_KIND,
            key=f"{thread.pk}:{message.seq}",
            payload={"thread_id": str(thread.pk), "seq": message.seq},
        )


@job_handler(JOB_KIND)
def run_extraction(job) -> None:
    try:
        thread = thread_for_operator(thread_id=job.payload["thread_id"])
    except NotFound:
        return  # deleted since: nothing left to remember
    run = turn_extract(thread=thread, last_seq=job.payload["seq"], job_id=job.pk)
    if run is not None:
        job_progress(job=job, done=run.stored, total=run.proposed, note=extraction_note(run))


def extraction_note(run: ExtractionRun) -> str:
    return (
        f"{run.status}: {run.proposed} proposed, {run.stored} stored, "
        f"{run.duplicates} duplicates, {run.rejected} rejected, {run.over_cap} over the cap"
    )
