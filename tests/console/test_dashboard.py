"""The dashboard: counts, ingest rate, job queue health, and links each role can open."""

import re
import time
from datetime import timedelta
from types import SimpleNamespace

import pytest
from django.utils import timezone

from apps.episodic.models import MemoryEntry
from apps.jobs.models import Job
from apps.jobs.services import job_enqueue
from apps.knowledge.models import Document, DocumentStatus
from apps.knowledge.services import document_from_text, knowledge_base_create
from apps.threads.models import Message


def _stat(content: str, label: str) -> tuple[str | None, str, str]:
    """(href or None, value, note) of the dashboard card with this label."""
    pattern = (
        r'<(a|div) class="stat"(?: href="([^"]*)")?>\s*<span class="[^"]*">'
        + re.escape(label)
        + r'</span><strong>([^<]*)</strong>(?:<span class="muted">([^<]*)</span>)?'
    )
    match = re.search(pattern, content)
    assert match, f"no card {label!r}"
    href = match.group(2).replace("&amp;", "&") if match.group(2) else None
    return href, match.group(3), match.group(4) or ""


def test_it_counts_projects_agents_threads_and_messages(as_role, alice, bob, carol):
    thread = alice.new_thread(title="one")
    alice.append(thread["id"], {"role": "user", "content": "a"}, {"role": "user", "content": "b"})
    carol.append(carol.new_thread()["id"], {"role": "user", "content": "c"})

    content = as_role("operator").get("/console/").content.decode()

    assert _stat(content, "Projects")[1] == "2"
    assert _stat(content, "Agents")[1] == "3"
    assert _stat(content, "Threads")[1] == "2"
    assert _stat(content, "Messages")[1] == "3"


def test_the_ingest_rate_counts_what_was_stored_in_the_last_hour(as_role, alice, monkeypatch):
    thread = alice.new_thread()
    stored_before = time.time_ns() - 61 * 60 * 10**9
    with monkeypatch.context() as earlier:  # the ids of a message stored 61 minutes ago
        earlier.setattr("apps.core.ids.time", SimpleNamespace(time_ns=lambda: stored_before))
        alice.append(thread["id"], {"role": "user", "content": "old"})
    alice.append(thread["id"], *[{"role": "user", "content": f"m{i}"} for i in range(120)])
    # Stored now, said last year (an imported chat): stored now is what the rate counts.
    last_year = timezone.now() - timedelta(days=365)
    Message.objects.filter(seq__lte=31, seq__gt=1).update(created_at=last_year)

    content = as_role("operator").get("/console/").content.decode()

    assert _stat(content, "Messages")[1] == "121"
    assert _stat(content, "Ingest rate, last hour")[1:] == ("120", "2.0 messages/min")


def test_it_shows_job_health_with_the_age_of_the_oldest_pending_job(as_role, db):
    old, new = job_enqueue(kind="test.old"), job_enqueue(kind="test.new")
    Job.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(seconds=600))
    Job.objects.filter(pk=new.pk).update(created_at=timezone.now() - timedelta(seconds=5))
    job_enqueue(kind="test.done")
    Job.objects.filter(kind="test.done").update(status="failed")

    content = as_role("operator").get("/console/").content.decode()

    href, pending, note = _stat(content, "Pending")
    assert (href, pending) == ("/console/jobs/?status=pending", "2")
    assert re.fullmatch(r"oldest waiting (600|601) s", note), note
    assert _stat(content, "Failed")[:2] == ("/console/jobs/?status=failed", "1")
    assert _stat(content, "Running")[1] == "0"


def test_an_empty_queue_says_none_waiting(as_role, db):
    content = as_role("operator").get("/console/").content.decode()

    assert _stat(content, "Pending")[1:] == ("0", "none waiting")


def test_document_counts_link_to_the_knowledge_list_filtered_by_status(as_role, alice):
    kb = knowledge_base_create(project=alice.agent.project, slug="ops", name="Ops")
    for title in ("a", "b", "c"):
        document_from_text(kb=kb, title=title, text=f"text {title}", actor="test")
    Document.objects.filter(title="c").update(status=DocumentStatus.FAILED)
    curator = as_role("curator")

    content = curator.get("/console/").content.decode()

    href, value, _ = _stat(content, "failed")
    assert (href, value) == ("/console/knowledge/?status=failed", "1")
    assert _stat(content, "pending")[:2] == ("/console/knowledge/?status=pending", "2")
    listed = curator.get(href)
    assert [kb.slug for kb in listed.context["page"]] == ["ops"]
    assert listed.context["page"][0].document_count == 3  # the filter does not skew the counts
    assert list(curator.get("/console/knowledge/?status=ready").context["page"]) == []
    documents = curator.get(f"/console/knowledge/{kb.id}/?status=failed")
    assert [doc.title for doc in documents.context["page"]] == ["c"]


# What each role's dashboard links to; None means the card is shown without a link.
LINKS = {
    "operator": {
        "Projects": "/console/projects/",
        "Threads": "/console/threads/",
        "Entries pending approval": None,
        "ready": None,
        "Pending": "/console/jobs/?status=pending",
    },
    "curator": {
        "Projects": "/console/projects/",
        "Threads": None,
        "Entries pending approval": None,
        "ready": "/console/knowledge/?status=ready",
        "Pending": None,
    },
    "moderator": {
        "Projects": "/console/projects/",
        "Threads": None,
        "Entries pending approval": "/console/moderation/?status=pending",
        "ready": None,
        "Pending": None,
    },
    "admin": {  # an admin holds every role
        "Projects": "/console/projects/",
        "Threads": "/console/threads/",
        "Entries pending approval": "/console/moderation/?status=pending",
        "ready": "/console/knowledge/?status=ready",
        "Pending": "/console/jobs/?status=pending",
    },
}


@pytest.mark.parametrize("role", sorted(LINKS))
def test_each_role_gets_links_only_to_pages_it_can_open(as_role, db, role):
    client = as_role(role)

    content = client.get("/console/").content.decode()

    for label, expected in LINKS[role].items():
        assert _stat(content, label)[0] == expected, (role, label)
    for href in re.findall(r'class="stat" href="([^"]*)"', content):
        assert client.get(href.replace("&amp;", "&")).status_code == 200, (role, href)


def test_the_pending_entries_card_counts_only_pending_entries(as_role, alice):
    for content in ("Prefers email.", "Lives in Oslo.", "Has two cats."):
        response = alice.post(
            "/api/v1/episodic", {"content": content, "resource_id": "cust-1", "source": "api"}
        )
        assert response.status_code == 201, response.content
    MemoryEntry.objects.filter(content="Has two cats.").update(status="approved")

    content = as_role("moderator").get("/console/").content.decode()

    assert _stat(content, "Entries pending approval")[1] == "2"


def test_the_projects_page_lists_agents_with_links_for_the_viewers_roles(as_role, alice, carol):
    operator = as_role("operator").get("/console/projects/").content.decode()
    admin = as_role("admin").get("/console/projects/").content.decode()

    assert "acme" in operator and "alice" in operator and "globex" in operator
    assert f"/console/threads/?agent={alice.agent.id}" in operator
    assert "/console/config/" not in operator
    assert "/console/config/?level=acme%2Falice" in admin
    assert "/console/config/" not in operator.split("<main>")[1]
    assert f"/console/threads/?agent={alice.agent.id}" in admin  # admin is a superset
