from django.apps import AppConfig


class KnowledgeConfig(AppConfig):
    name = "apps.knowledge"
    label = "knowledge"
    verbose_name = "Knowledge bases"

    def ready(self):
        from apps.knowledge import jobs  # noqa: F401  (registers the ingestion job)
