"""Kill -9 a real worker process in the middle of a 200-page PDF."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from django.conf import settings
from django.db import connection

from apps.jobs.models import Job
from apps.knowledge.models import Chunk, Document
from apps.search.models import SearchItem
from tests.conftest import make_actor
from tests.pdfs import make_pdf, page_text

ROOT = Path(__file__).resolve().parents[2]


def _worker_env(lease_seconds: int) -> dict:
    """The environment of a worker process that uses this test's database and files."""
    db = connection.settings_dict
    if connection.vendor == "postgresql":
        url = (
            f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
        )
    else:
        url = f"sqlite:///{db['NAME']}"
    return {
        **os.environ,
        "DATABASE_URL": url,
        "MEDIA_ROOT": str(settings.MEDIA_ROOT),
        "JOB_LEASE_SECONDS": str(lease_seconds),
        "DJANGO_SETTINGS_MODULE": "memory_console.settings",
    }


def _start_worker(env) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "manage.py", "run_worker", "--poll", "0.1"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def _wait(condition, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def test_a_killed_worker_leaves_nothing_visible_and_a_new_worker_finishes(transactional_db):
    alice = make_actor("acme", "alice")
    alice.post("/api/v1/knowledge-bases", {"slug": "manuals"})
    pdf = make_pdf([page_text(number) for number in range(1, 201)])
    document = alice.upload("/api/v1/knowledge-bases/manuals/documents", "manual.pdf", pdf).json()
    env = _worker_env(lease_seconds=2)

    first = _start_worker(env)
    try:
        _wait(
            lambda: Document.objects.get(pk=document["id"]).status == "processing",
            30,
            "the worker to start the document",
        )
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()

    assert Document.objects.get(pk=document["id"]).status == "processing"
    assert Chunk.objects.count() == 0
    found = alice.post("/api/v1/search", {"query": "coolant valve", "scopes": ["knowledge"]})
    assert found.json()["results"] == []

    second = _start_worker(env)
    try:
        _wait(
            lambda: Document.objects.get(pk=document["id"]).status == "ready",
            90,
            "a new worker to reclaim and finish the document",
        )
    finally:
        second.send_signal(signal.SIGTERM)
        second.wait(timeout=30)

    ready = Document.objects.get(pk=document["id"])
    indexes = list(Chunk.objects.filter(document=ready).values_list("chunk_index", flat=True))
    assert len(indexes) == len(set(indexes)) == ready.chunk_count > 200
    assert sorted(indexes) == list(range(ready.chunk_count))
    assert SearchItem.objects.filter(kind="chunk").count() == ready.chunk_count
    assert Job.objects.get(kind="knowledge.ingest").attempts == 2
    results = alice.post("/api/v1/search", {"query": "coolant valve", "scopes": ["knowledge"]})
    assert results.json()["results"]
