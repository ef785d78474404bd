"""Jobs delivered through a real broker (Redis) to a real Celery worker."""

from django.db import transaction

from apps.jobs.models import Job, JobStatus
from apps.jobs.services import job_enqueue
from apps.jobs.tasks import run_job
from tests.jobs import handlers
from tests.jobs.conftest import wait_drained, wait_for


def test_a_committed_job_is_delivered_to_a_celery_worker(celery_worker):
    with transaction.atomic():
        job = job_enqueue(kind="test.record", key="via-broker")

    wait_for(job.id, JobStatus.SUCCEEDED)

    assert handlers.RUNS == ["via-broker"]


def test_the_same_job_delivered_twice_has_its_effect_once(celery_worker, broker_url):
    with transaction.atomic():
        job = job_enqueue(kind="test.record", key="twice")
    run_job.delay(str(job.id))
    run_job.delay(str(job.id))

    wait_for(job.id, JobStatus.SUCCEEDED)
    wait_drained(broker_url)  # the duplicate deliveries have arrived and been refused

    assert handlers.RUNS == ["twice"]
    assert Job.objects.get(pk=job.id).attempts == 1
