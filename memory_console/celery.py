"""The Celery application; tasks are discovered in every installed app's tasks.py."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_console.settings")

app = Celery("memory_console")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
