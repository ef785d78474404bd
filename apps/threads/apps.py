from django.apps import AppConfig


class ThreadsConfig(AppConfig):
    name = "apps.threads"
    label = "threads"
    verbose_name = "Threads and messages"
