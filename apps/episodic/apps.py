from django.apps import AppConfig


class EpisodicConfig(AppConfig):
    name = "apps.episodic"
    label = "episodic"
    verbose_name = "Memory entries"

    def ready(self):
        from apps.episodic.memory_actions import memory_actions_enqueue
        from apps.threads.hooks import on_messages_appended

        on_messages_appended(memory_actions_enqueue)
