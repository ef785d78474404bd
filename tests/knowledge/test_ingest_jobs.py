"""Document ingestion through the job machinery: workers that die, deliveries that repeat."""

import threading
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import connections
from django.utils import timezone

from apps.jobs.models import Job
from apps.jobs.services import job_claim, job_execute, job_run_pending
from apps.jobs.tasks import run_job
from apps.knowledge.models import Chunk, Document
from apps.search.models import SearchItem
from tests.conftest import make_actor
from tests.pdfs import make_pdf, page_text

KB = "/api/v1/knowledge-bases/manuals/documents"


class WorkerKilled(BaseException):
    """Stands for a kill -9: it escapes every `except Exception`, so nothing is recorded."""


def _die_while_publishing(*args, **kwargs):
    raise WorkerKilled


def _upload_manual(actor, pages=20) -> dict:
    actor.post("/api/v1/knowledge-bases", {"slug": "manuals"})
    pdf = make_pdf([page_text(number) for number in range(1, pages + 1)])
    response = actor.upload(KB, "manual.pdf", pdf)
    assert response.status_code == 202, response.content
    return response.json()


def _expire_lease(job: Job) -> None:
    Job.objects.filter(pk=job.pk).update(locked_at=timezone.now() - timedelta(hours=1))


def _kill_the_worker_on_every_attempt(monkeypatch, job: Job) -> None:
    monkeypatch.setattr("apps.knowledge.ingestion._publish", _die_while_publishing)
    for _ in range(job.max_attempts):
        with pytest.raises(WorkerKilled):
            job_run_pending()
        _expire_lease(job)
    monkeypatch.undo()


def _knowledge(actor, query):
    response = actor.post("/api/v1/search", {"query": query, "scopes": ["knowledge"]})
    assert response.status_code == 200, response.content
    return response.json()["results"]


def test_a_document_whose_worker_always_dies_ends_failed_with_the_reason(alice, monkeypatch):
    document = _upload_manual(alice)
    job = Job.objects.get(kind="knowledge.ingest")
    _kill_the_worker_on_every_attempt(monkeypatch, job)

    call_command("run_worker", "--once")

    job.refresh_from_db()
    assert (job.status, job.attempts) == ("failed", 3)
    assert "worker stopped 3 times" in job.error
    failed = alice.get(f"/api/v1/documents/{document['id']}").json()
    assert failed["status"] == "failed"
    assert "worker stopped 3 times" in failed["error"]
    assert failed["chunk_count"] == 0
    assert Chunk.objects.count() == SearchItem.objects.filter(kind="chunk").count() == 0
    assert _knowledge(alice, "coolant valve") == []
    assert job_run_pending() == 0  # not reclaimed again


def test_a_reindex_whose_worker_always_dies_drops_the_old_chunks(alice, monkeypatch):
    document = _upload_manual(alice, pages=3)
    job_run_pending()
    assert Chunk.objects.count() > 0
    alice.post(f"/api/v1/documents/{document['id']}/reindex")
    _kill_the_worker_on_every_attempt(monkeypatch, Job.objects.get(status="pending"))

    job_run_pending()

    failed = Document.objects.get(pk=document["id"])
    assert (failed.status, failed.chunk_count, failed.token_count) == ("failed", 0, 0)
    assert Chunk.objects.count() == SearchItem.objects.filter(kind="chunk").count() == 0
    assert _knowledge(alice, "coolant valve") == []


def test_a_worker_that_dies_once_is_retried_to_ready(alice, monkeypatch):
    document = _upload_manual(alice, pages=3)
    job = Job.objects.get(kind="knowledge.ingest")
    monkeypatch.setattr("apps.knowledge.ingestion._publish", _die_while_publishing)
    with pytest.raises(WorkerKilled):
        job_run_pending()
    monkeypatch.undo()
    _expire_lease(job)

    job_run_pending()

    job.refresh_from_db()
    ready = Document.objects.get(pk=document["id"])
    assert (job.status, job.attempts) == ("succeeded", 2)
    assert (ready.status, ready.attempts, ready.error) == ("ready", 2, "")
    assert Chunk.objects.count() == ready.chunk_count > 0


def _assert_ingested_once(document_id) -> None:
    ready = Document.objects.get(pk=document_id)
    indexes = list(Chunk.objects.values_list("chunk_index", flat=True))
    assert (ready.status, ready.attempts) == ("ready", 1)
    assert sorted(indexes) == list(range(ready.chunk_count))
    assert SearchItem.objects.filter(kind="chunk").count() == ready.chunk_count > 0


def test_the_same_ingest_job_delivered_twice_in_a_row_runs_once(alice):
    document = _upload_manual(alice, pages=3)
    job = Job.objects.get(kind="knowledge.ingest")

    run_job(str(job.id))
    run_job(str(job.id))

    job.refresh_from_db()
    assert (job.status, job.attempts) == ("succeeded", 1)
    _assert_ingested_once(document["id"])


def test_the_same_ingest_job_delivered_to_two_workers_at_once_runs_once(transactional_db):
    alice = make_actor("acme", "alice")
    document = _upload_manual(alice, pages=3)
    job = Job.objects.get(kind="knowledge.ingest")
    start = threading.Barrier(2)
    errors = []

    def deliver():
        start.wait()
        try:
            run_job(str(job.id))
        except Exception as exc:  # pragma: no cover - reported by the assertion below
            errors.append(exc)
        finally:
            connections.close_all()  # this thread's own connections

    threads = [threading.Thread(target=deliver) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert errors == []
    job.refresh_from_db()
    assert (job.status, job.attempts) == ("succeeded", 1)
    _assert_ingested_once(document["id"])


def test_a_delivery_after_the_document_was_published_only_finishes_the_job(alice):
    document = _upload_manual(alice, pages=3)
    job = Job.objects.get(kind="knowledge.ingest")
    claimed = job_claim(job_id=job.id, worker="dies-after-publishing")
    from apps.knowledge.ingestion import document_ingest

    document_ingest(document_id=document["id"], job=claimed)  # then the worker died
    _expire_lease(job)

    job_execute(job=job_claim(job_id=job.id, worker="second"))

    job.refresh_from_db()
    assert (job.status, job.attempts) == ("succeeded", 2)
    _assert_ingested_once(document["id"])
