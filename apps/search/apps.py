from django.apps import AppConfig


class SearchConfig(AppConfig):
    name = "apps.search"
    label = "search"
    verbose_name = "Search index"

    def ready(self):
        from apps.memconfig.hooks import embedder_changed
        from apps.search import jobs  # registers the embedding job, and its receiver below

        # memconfig sits below search: it cannot call search, so search asks to be told.
        embedder_changed.connect(jobs.reembed_on_embedder_change, dispatch_uid="search.reembed")
