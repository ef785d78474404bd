"""A job that fails on every attempt stops after its retry budget, with its reason, and stays down.

The generic rules are tested with test handlers in tests/jobs/test_jobs.py (a failing handler,
a worker dying on every attempt); here the poison is a real job: the project's embedding job
against an embedder that answers 500 to every request.
"""

from django.utils import timezone

from apps.jobs.models import Job, JobStatus
from apps.jobs.services import job_run_pending
from apps.providers.fake_openai import FakeOpenAIServer
from apps.search.vectors import JOB_KIND


def test_an_embedding_job_against_a_broken_embedder_fails_after_its_budget(
    alice, use_embedder, settings
):
    with FakeOpenAIServer() as embedder:
        settings.OPENAI_BASE_URL = embedder.base_url
        settings.OPENAI_API_KEY = "sk-test"
        settings.OPENAI_MAX_RETRIES = 0
        thread = alice.new_thread(resource_id="ann")
        alice.append(thread["id"], {"role": "user", "content": "the boiler leaks"})
        embedder.fail_next(1000, status=500, message="the embedder is down")
        use_embedder(alice, model="text-embedding-3-small", dims=64)
        job = Job.objects.get(kind=JOB_KIND, status=JobStatus.PENDING)

        for _ in range(job.max_attempts + 3):  # every retry made due at once, and then some
            Job.objects.filter(pk=job.pk, status=JobStatus.PENDING).update(run_after=timezone.now())
            job_run_pending()
        calls = len(embedder.bodies("/v1/embeddings"))

        job.refresh_from_db()
        assert job.status == JobStatus.FAILED
        assert job.attempts == job.max_attempts
        assert "the embedder is down" in job.error
        assert f"gave up after {job.max_attempts} attempts" in job.error
        assert calls == job.max_attempts  # one embedder call per attempt: no loop inside one
        assert job_run_pending() == 0
        assert len(embedder.bodies("/v1/embeddings")) == calls
