"""A job delivered twice at once, as a broker may after a lost acknowledgement, acts once.

tests/jobs covers the mechanism with a test handler (test_jobs.py: one claim among eight
workers, a finished job delivered again; test_celery_delivery.py: twice through Redis). Here the
deliveries are of real jobs, two Celery task calls racing on two database connections: a
document's ingestion and the project's embedding job.
"""

from concurrent.futures import ThreadPoolExecutor

from django.db import connections

from apps.jobs.models import Job, JobStatus
from apps.jobs.tasks import run_job
from apps.knowledge.ingestion import JOB_KIND as INGEST
from apps.knowledge.models import Chunk
from apps.search.models import ItemEmbedding, SearchItem
from apps.search.vectors import JOB_KIND as VECTORS
from tests.conftest import make_actor

RUNBOOK = b"# Runbook\n\n" + b"".join(
    f"## Step {n}\n\nRestart worker {n} and check the queue.\n\n".encode() for n in range(40)
)


def _deliver_twice_at_once(job: Job) -> None:
    def deliver(_):
        try:
            run_job(str(job.pk))
        finally:
            connections.close_all()  # or the test database cannot be dropped afterwards

    with ThreadPoolExecutor(2) as pool:
        list(pool.map(deliver, range(2)))


def test_a_document_and_its_vectors_delivered_twice_are_made_once(transactional_db, use_embedder):
    alice = make_actor("acme", "alice")
    use_embedder(alice)
    alice.post("/api/v1/knowledge-bases", {"slug": "ops"})
    document = alice.upload("/api/v1/knowledge-bases/ops/documents", "runbook.md", RUNBOOK).json()

    ingest = Job.objects.get(kind=INGEST, status=JobStatus.PENDING)
    _deliver_twice_at_once(ingest)
    run_job(str(ingest.pk))  # and once more, long after: the acknowledgement was lost

    ingest.refresh_from_db()
    assert (ingest.status, ingest.attempts) == (JobStatus.SUCCEEDED, 1)
    chunks = Chunk.objects.filter(document_id=document["id"])
    assert chunks.count() > 1
    assert list(chunks.values_list("chunk_index", flat=True).order_by("chunk_index")) == list(
        range(chunks.count())
    )
    items = SearchItem.objects.filter(chunk__document_id=document["id"])
    assert items.count() == chunks.count()

    vectors = Job.objects.get(kind=VECTORS, status=JobStatus.PENDING)
    _deliver_twice_at_once(vectors)

    vectors.refresh_from_db()
    assert (vectors.status, vectors.attempts) == (JobStatus.SUCCEEDED, 1)
    assert ItemEmbedding.objects.filter(item__in=items).count() == items.count()
