from django.apps import AppConfig


class ObservationsConfig(AppConfig):
    name = "apps.observations"
    label = "observations"
    verbose_name = "Observational memory"

    def ready(self):
        from apps.observations import jobs  # noqa: F401  (registers the update job)
        from apps.observations.services import observations_enqueue_if_due
        from apps.threads.hooks import on_messages_appended

        # threads sits below observations: it cannot call it, so observations asks to be told.
        on_messages_appended(observations_enqueue_if_due)
