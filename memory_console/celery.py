"""The Celery application; tasks are discovered in every installed app's tasks.py."""

import os

from celery import Celery
from celery.signals import worker_ready

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_console.settings")

app = Celery("memory_console")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_ready.connect
def _serve_worker_metrics(**kwargs):
    """With WORKER_METRICS_PORT and METRICS_TOKEN set, serve the worker's metrics on that port."""
    from django.conf import settings

    from apps.core.metrics import metrics_server_start

    if settings.WORKER_METRICS_PORT and settings.METRICS_TOKEN:
        metrics_server_start(port=settings.WORKER_METRICS_PORT, token=settings.METRICS_TOKEN)
