"""The one periodic schedule (Celery beat). Every entry says why it runs at that cadence."""

BEAT_SCHEDULE: dict = {
    # A job whose broker message was lost (broker down at commit, a purged queue) would wait
    # forever; once a minute bounds that wait without flooding the broker.
    "sweep-jobs": {"task": "apps.jobs.tasks.sweep_jobs", "schedule": 60.0},
    # Hippo consolidation. Each agent sets its own consolidation_interval_seconds (300 by
    # default, 10 at the least); the sweep queues only the threads whose interval has passed, so
    # it runs as often as the shortest allowed interval. One query per agent returns only its
    # due threads, and a thread's pending job is reused, not doubled.
    "consolidate-threads": {
        "task": "apps.episodic.consolidation.jobs.consolidation_sweep",
        "schedule": 10.0,
    },
}
