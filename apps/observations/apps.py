from django.apps import AppConfig


class ObservationsConfig(AppConfig):
    name = "apps.observations"
    label = "observations"
    verbose_name = "Observational memory"

    def ready(self):
        from apps.observations import jobs  # noqa: F401  (registers the update job)
        from apps.observations.failures import failure_reported
        from apps.observations.services import observations_enqueue_if_due
        from apps.providers.failures import model_answer_failed
        from apps.threads.hooks import messages_appended

        def queue_if_due(sender, *, thread, messages, **kwargs):
            observations_enqueue_if_due(thread=thread, messages=messages)

        # threads sits below observations: it cannot call it, so observations asks to be told.
        messages_appended.connect(queue_if_due, dispatch_uid="observations.queue", weak=False)
        # Consolidation and extraction (episodic, beside this app) report their model failures
        # through providers; they are kept here, with the observer's, on the thread page.
        model_answer_failed.connect(
            failure_reported, dispatch_uid="observations.failures", weak=False
        )
