"""Reads of action events, within one agent's threads."""

from apps.actions.models import ActionEvent, ActionWebhook


def action_list(*, thread, name: str | None = None):
    events = ActionEvent.objects.filter(thread=thread)
    if name is not None:
        events = events.filter(name=name)
    return events


def webhook_for(*, project_id, name: str) -> ActionWebhook | None:
    return ActionWebhook.objects.filter(project_id=project_id, name=name, active=True).first()
