from django.apps import AppConfig


class SearchConfig(AppConfig):
    name = "apps.search"
    label = "search"
    verbose_name = "Search index"

    def ready(self):
        from apps.search import jobs  # noqa: F401  (registers the embedding job)
