"""Job handlers of knowledge bases."""

from apps.jobs.registry import job_failure_handler, job_handler
from apps.knowledge.ingestion import JOB_KIND, document_ingest, document_ingest_failed


@job_handler(JOB_KIND)
def run_document_ingest(job):
    document_ingest(document_id=job.payload["document_id"], job=job)


@job_failure_handler(JOB_KIND)
def fail_document_ingest(job, error):
    document_ingest_failed(document_id=job.payload["document_id"], error=error)
