from django.apps import AppConfig


class ProvidersConfig(AppConfig):
    name = "apps.providers"
    label = "providers"

    def ready(self):
        from apps.providers import checks  # noqa: F401  (registers the system checks)
