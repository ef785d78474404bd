from django.apps import AppConfig


class TenancyConfig(AppConfig):
    name = "apps.tenancy"
    label = "tenancy"
    verbose_name = "Projects, agents and keys"

    def ready(self):
        from apps.tenancy import schema  # noqa: F401  (registers the OpenAPI auth extension)
