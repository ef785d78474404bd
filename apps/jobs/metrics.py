"""The job queue's depth for /metrics, read from the database at each scrape."""

from django.db.models import Count
from prometheus_client.core import GaugeMetricFamily

from apps.jobs.models import Job, JobStatus

# Finished jobs pile up for the record; the queue is what waits and what runs.
QUEUED = (JobStatus.PENDING, JobStatus.RUNNING)


class JobQueueCollector:
    """Report how many jobs wait (pending) or run, by kind and state."""

    def collect(self):
        family = GaugeMetricFamily(
            "memory_console_jobs",
            "Background jobs waiting (pending) or running, by kind and state.",
            labels=["kind", "state"],
        )
        rows = (
            Job.objects.filter(status__in=QUEUED)
            .values_list("kind", "status")
            .annotate(n=Count("id"))
            .order_by("kind", "status")
        )
        for kind, state, count in rows:
            family.add_metric([kind, state], count)
        yield family
