from django.apps import AppConfig


class ObservationsConfig(AppConfig):
    name = "apps.observations"
    label = "observations"
    verbose_name = "Observational memory"

    def ready(self):
        from apps.observations import jobs  # noqa: F401  (registers the update job)
        from apps.observations.services import observations_enqueue_if_due
        from apps.threads.hooks import messages_appended

        def queue_if_due(sender, *, thread, messages, **kwargs):
            observations_enqueue_if_due(thread=thread, messages=messages)

        # threads sits below observations: it cannot call it, so observations asks to be told.
        messages_appended.connect(queue_if_due, dispatch_uid="observations.queue", weak=False)
