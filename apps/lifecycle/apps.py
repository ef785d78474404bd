from django.apps import AppConfig


class LifecycleConfig(AppConfig):
    name = "apps.lifecycle"
    label = "lifecycle"
    verbose_name = "Data lifecycle"

    def ready(self):
        from apps.lifecycle import kinds, stale  # noqa: F401  (registers the kinds and signals)
