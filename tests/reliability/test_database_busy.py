"""SQLite's write lock held by another writer for longer than the busy timeout: a request that
must write answers 503 with Retry-After (the API in its JSON error shape), never 500, and the
same request succeeds once the lock is free.

Through the real HTTP server, with a short busy timeout so the wait ends quickly; another
connection holds the lock as a long background transaction would. PostgreSQL has no database
write lock (rows are locked one by one), so this is SQLite's alone.
"""

import sqlite3
import threading
import time
from contextlib import contextmanager

import pytest
import requests
from django import db
from django.db import connection
from django.test import Client

from apps.episodic.consolidation import thread_consolidate_now
from apps.episodic.models import MemoryEntry
from apps.jobs.services import job_run_pending
from apps.memconfig.services import config_update
from apps.tenancy.models import ApiKey
from apps.threads.models import Thread
from tests.conftest import make_actor
from tests.episodic.test_consolidation import conversation, thread_with

BUSY_TIMEOUT_SECONDS = 0.2


@pytest.fixture
def write_lock(transactional_db, monkeypatch):
    """Return a context manager that holds the database's write lock from another connection."""
    if connection.vendor != "sqlite":
        pytest.skip("the database write lock is SQLite's")
    # The server's connections are opened per request thread, with these options.
    monkeypatch.setitem(connection.settings_dict["OPTIONS"], "timeout", BUSY_TIMEOUT_SECONDS)

    @contextmanager
    def held():
        other = sqlite3.connect(connection.settings_dict["NAME"], isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        try:
            yield
        finally:
            other.execute("ROLLBACK")
            other.close()

    return held


def test_an_api_write_that_cannot_get_the_lock_answers_503_with_retry_after(
    live_server, write_lock
):
    alice = make_actor("acme", "alice")
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {alice.key}"
    url = f"{live_server.url}/api/v1/threads"

    with write_lock():
        busy = session.post(url, json={"title": "t"}, timeout=30)

    assert busy.status_code == 503, busy.text
    assert int(busy.headers["Retry-After"]) > 0
    error = busy.json()["error"]
    assert error["code"] == "database_busy" and "Retry-After" in error["message"]
    assert session.post(url, json={"title": "t"}, timeout=30).status_code == 201


def test_a_read_goes_on_when_the_api_keys_last_use_cannot_be_recorded(live_server, write_lock):
    alice = make_actor("acme", "alice")  # a new key: its first use is due to be recorded
    headers = {"Authorization": f"Bearer {alice.key}"}

    with write_lock():
        read = requests.get(f"{live_server.url}/api/v1/threads", headers=headers, timeout=30)

    assert read.status_code == 200, read.text
    assert ApiKey.objects.get(agent=alice.agent).last_used_at is None
    requests.get(f"{live_server.url}/api/v1/threads", headers=headers, timeout=30)
    assert ApiKey.objects.get(agent=alice.agent).last_used_at is not None


def test_a_console_write_that_cannot_get_the_lock_answers_503_with_retry_after(
    live_server, write_lock, django_user_model
):
    alice = make_actor("acme", "alice")
    entry = alice.post("/api/v1/episodic", {"content": "The VPN drops at 5pm"}).json()
    operator = Client()
    operator.force_login(django_user_model.objects.create_superuser("root", password="pw"))
    browser = requests.Session()
    browser.cookies.update({"sessionid": operator.cookies["sessionid"].value})
    page = browser.get(f"{live_server.url}/console/moderation/", timeout=30)
    assert page.status_code == 200
    approve = f"{live_server.url}/console/moderation/{entry['id']}/approve/"
    headers = {"X-CSRFToken": browser.cookies["csrftoken"], "Referer": live_server.url}

    with write_lock():
        busy = browser.post(approve, headers=headers, timeout=30, allow_redirects=False)

    assert busy.status_code == 503, busy.text[:500]
    assert int(busy.headers["Retry-After"]) > 0 and "try again" in busy.text
    assert MemoryEntry.objects.get(pk=entry["id"]).status == "pending"
    done = browser.post(approve, headers=headers, timeout=30, allow_redirects=False)
    assert done.status_code in (200, 302), done.text[:500]
    assert MemoryEntry.objects.get(pk=entry["id"]).status == "approved"


def test_consolidation_holds_no_write_lock_while_the_embedder_works(write_lock, llm):
    """An embedder that takes 1.5 s a call: writers with a 1 s busy timeout still get in."""
    alice = make_actor("acme", "alice")
    config_update(
        project=alice.agent.project,
        changes={"embedder_model": "text-embedding-3-small", "embedder_dimensions": 64},
        changed_by="test",
    )
    config_update(agent=alice.agent, changes={"observer_model": ""}, changed_by="test")
    thread = thread_with(alice, conversation(60), resource_id="dana")
    job_run_pending()  # the vector index: consolidation's dedupe then embeds every entry
    llm.delay(1.5)
    refused = []

    def consolidate():
        try:
            thread_consolidate_now(thread=Thread.objects.get(pk=thread.pk))
        finally:
            db.connection.close()

    worker = threading.Thread(target=consolidate)
    worker.start()
    while worker.is_alive():
        other = sqlite3.connect(connection.settings_dict["NAME"], timeout=1.0)
        try:
            other.execute("BEGIN IMMEDIATE")
            other.execute("ROLLBACK")
        except sqlite3.OperationalError as error:
            refused.append(str(error))
        finally:
            other.close()
        time.sleep(0.05)
    worker.join()

    assert MemoryEntry.objects.filter(thread=thread, kind="consolidated").exists()
    assert len(llm.bodies("/v1/embeddings")) > 1
    assert refused == []
