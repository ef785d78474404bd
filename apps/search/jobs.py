"""Job handlers of the search index."""

from apps.jobs.registry import job_handler
from apps.search.vectors import JOB_KIND, vectors_sync


@job_handler(JOB_KIND)
def run_vectors_sync(job):
    vectors_sync(project_id=job.payload["project_id"], job=job)
