from django.apps import AppConfig


class EpisodicConfig(AppConfig):
    name = "apps.episodic"
    label = "episodic"
    verbose_name = "Memory entries"

    def ready(self):
        from apps.episodic.consolidation import jobs  # noqa: F401  (registers job and task)
        from apps.episodic.extraction import extraction_enqueue
        from apps.episodic.memory_actions import memory_actions_enqueue
        from apps.threads.hooks import messages_appended

        def queue_memory_actions(sender, *, thread, messages, **kwargs):
            memory_actions_enqueue(thread=thread, messages=messages)

        def queue_extraction(sender, *, thread, messages, **kwargs):
            extraction_enqueue(thread=thread, messages=messages)

        # threads sits below episodic: it cannot call it, so episodic asks to be told.
        messages_appended.connect(
            queue_memory_actions, dispatch_uid="episodic.memory_actions", weak=False
        )
        messages_appended.connect(queue_extraction, dispatch_uid="episodic.extraction", weak=False)
