"""The one periodic schedule (Celery beat). Every entry says why it runs at that cadence."""

BEAT_SCHEDULE: dict = {
    # A job whose broker message was lost (broker down at commit, a purged queue) would wait
    # forever; once a minute bounds that wait without flooding the broker.
    "sweep-jobs": {"task": "apps.jobs.tasks.sweep_jobs", "schedule": 60.0},
}
