from django.apps import AppConfig


class EpisodicConfig(AppConfig):
    name = "apps.episodic"
    label = "episodic"
    verbose_name = "Memory entries"
