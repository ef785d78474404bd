"""Job handlers of observational memory and compaction."""

from apps.core.errors import NotFound
from apps.jobs.registry import job_handler
from apps.observations.services import JOB_KIND, observations_update
from apps.threads.selectors import thread_for_operator


@job_handler(JOB_KIND)
def run_observations_update(job):
    try:
        thread = thread_for_operator(thread_id=job.payload["thread_id"])
    except NotFound:
        return  # the thread was deleted after the job was queued: nothing to keep up to date
    observations_update(thread=thread)
