from django.apps import AppConfig


class SearchConfig(AppConfig):
    name = "apps.search"
    label = "search"
    verbose_name = "Search index"

    def ready(self):
        from apps.memconfig.hooks import on_embedder_changed
        from apps.search import jobs  # noqa: F401  (registers the embedding job)
        from apps.search.vectors import vectors_sync_enqueue

        # memconfig sits below search: it cannot call search, so search asks to be told.
        on_embedder_changed(vectors_sync_enqueue)
