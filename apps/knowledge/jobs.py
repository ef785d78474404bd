"""Job handlers of knowledge bases."""

from apps.jobs.registry import job_handler
from apps.knowledge.ingestion import JOB_KIND, document_ingest


@job_handler(JOB_KIND)
def run_document_ingest(job):
    document_ingest(document_id=job.payload["document_id"], job=job)
