from django.apps import AppConfig


class ActionsConfig(AppConfig):
    name = "apps.actions"
    label = "actions"
    verbose_name = "Action tokens and their webhooks"

    def ready(self):
        from apps.actions import delivery  # noqa: F401  (registers the delivery job)
        from apps.actions.services import actions_record
        from apps.threads.hooks import messages_appended

        def record_actions(sender, *, thread, messages, **kwargs):
            actions_record(thread=thread, messages=messages)

        # threads sits below actions: it cannot call it, so actions asks to be told.
        messages_appended.connect(record_actions, dispatch_uid="actions.record", weak=False)
