"""Reads of action events (within one agent's threads) and of the projects' webhooks."""

from apps.actions.models import ActionEvent, ActionSecret, ActionWebhook


def action_list(*, thread, name: str | None = None):
    events = ActionEvent.objects.filter(thread=thread)
    if name is not None:
        events = events.filter(name=name)
    return events


def webhook_for(*, project_id, name: str) -> ActionWebhook | None:
    return ActionWebhook.objects.filter(project_id=project_id, name=name, active=True).first()


def webhook_list(*, project=None):
    """A project's webhooks (or every project's), by project and name."""
    webhooks = ActionWebhook.objects.select_related("project").order_by("project__slug", "name")
    return webhooks if project is None else webhooks.filter(project=project)


def webhook_get(*, webhook_id) -> ActionWebhook | None:
    return ActionWebhook.objects.select_related("project").filter(pk=webhook_id).first()


def secret_of(*, project_id) -> str | None:
    """The project's signing secret, or None while it has none (made with its first webhook)."""
    return (
        ActionSecret.objects.filter(project_id=project_id).values_list("secret", flat=True).first()
    )
