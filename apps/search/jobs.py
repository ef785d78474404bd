"""Job handlers of the search index."""

from apps.jobs.registry import job_handler
from apps.search.vectors import JOB_KIND, vectors_sync, vectors_sync_enqueue


@job_handler(JOB_KIND)
def run_vectors_sync(job):
    vectors_sync(project_id=job.payload["project_id"], job=job)


def reembed_on_embedder_change(sender, *, project_id, **kwargs):
    """Receive memconfig's embedder_changed: queue the project's vector job."""
    vectors_sync_enqueue(project_id=project_id)
