"""The background jobs page: filter by status and kind, newest first, paged."""

import pytest

from apps.jobs.models import Job
from apps.jobs.services import job_enqueue


@pytest.fixture
def jobs(db):
    for number in range(3):
        job_enqueue(kind="knowledge.ingest", key=f"doc-{number}")
    job_enqueue(kind="threads.embed", key="t-1")
    failed = job_enqueue(kind="threads.embed", key="t-2")
    Job.objects.filter(pk=failed.pk).update(status="failed", error="embedder down")


def _listed(response) -> list[tuple[str, str, str]]:
    assert response.status_code == 200
    return sorted((job.kind, job.key, job.status) for job in response.context["page"])


def test_an_unknown_status_is_told_not_ignored(as_role, jobs):
    response = as_role("operator").get("/console/jobs/", {"status": "bogus"})

    assert response.status_code == 400
    body = response.content.decode()
    assert "status=bogus: no such job status; choose pending, running" in body
    assert "<table" not in body


def test_an_unknown_kind_is_told_not_listed_as_nothing(as_role, jobs):
    response = as_role("operator").get("/console/jobs/", {"kind": "no.such.kind"})

    assert response.status_code == 400
    body = response.content.decode()
    assert "kind=no.such.kind: no job of this kind; choose " in body
    assert "search.vectors" in body  # a kind with a handler, though no job of it is stored
    assert "<table" not in body


@pytest.mark.parametrize(
    "params, expected",
    [
        ({}, 5),
        ({"status": "pending"}, 4),
        ({"status": "failed"}, 1),
        ({"kind": "threads.embed"}, 2),
        ({"kind": "threads.embed", "status": "pending"}, 1),
        ({"kind": "knowledge.ingest", "status": "failed"}, 0),
    ],
)
def test_it_filters_jobs_by_status_and_kind(as_role, jobs, params, expected):
    listed = _listed(as_role("operator").get("/console/jobs/", params))

    assert len(listed) == expected
    for kind, _key, status in listed:
        assert params.get("kind", kind) == kind
        assert params.get("status", status) in (status, "bogus")


def test_it_shows_the_error_of_a_failed_job_and_marks_the_chosen_status(as_role, jobs):
    content = as_role("admin").get("/console/jobs/", {"status": "failed"}).content.decode()

    assert "embedder down" in content
    assert '<option value="failed" selected>failed</option>' in content


def test_an_empty_filter_says_so(as_role, jobs):
    client = as_role("operator")
    content = client.get("/console/jobs/", {"status": "running"}).content.decode()

    assert "No jobs with status running." in content
    filtered = client.get("/console/jobs/", {"kind": "threads.embed", "status": "running"})
    assert "No jobs of kind threads.embed with status running." in filtered.content.decode()


def test_it_pages_jobs_newest_first_and_keeps_the_filters(as_role, db):
    for number in range(30):
        job_enqueue(kind="bulk", key=f"k{number:02}")
    job_enqueue(kind="other")
    client = as_role("operator")

    first = client.get("/console/jobs/", {"kind": "bulk"})
    second = client.get("/console/jobs/", {"kind": "bulk", "page": 2})

    assert [job.key for job in first.context["page"]][:2] == ["k29", "k28"]
    assert len(first.context["page"]) == 25
    assert [job.key for job in second.context["page"]] == [f"k{n:02}" for n in range(4, -1, -1)]
    assert 'href="?kind=bulk&amp;page=2"' in first.content.decode()
