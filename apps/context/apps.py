from django.apps import AppConfig


class ContextConfig(AppConfig):
    name = "apps.context"
    label = "context"
    verbose_name = "Context assembly"
