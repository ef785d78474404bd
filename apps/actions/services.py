"""Record the action tokens of assistant messages, and queue their webhook deliveries.

The receiver of messages_appended runs inside the append's transaction: the events and their
queued deliveries commit or roll back with the messages. Parsing is a regex over text the
append already holds, so the append never waits on a webhook.
"""

import re
import secrets
from urllib.parse import urlsplit

from django.db import IntegrityError, transaction

from apps.actions.models import ActionEvent, ActionSecret, ActionWebhook, Delivery
from apps.audit.services import audit_record
from apps.core.errors import Conflict, NotFound
from apps.core.ids import uuid7
from apps.core.outbound import OutboundRefused, url_check
from apps.jobs.services import job_enqueue
from apps.threads.action_tokens import action_tokens
from apps.threads.models import Role

JOB_KIND = "actions.webhook"
# Attempts of one delivery; the job system waits 5 s, 10 s, 20 s, 40 s between them.
DELIVERY_ATTEMPTS = 5
# MEMORY tokens are facts for the memory (apps.episodic.memory_actions), not actions.
NOT_ACTIONS = {"MEMORY"}
NAME = re.compile(r"^[A-Z][A-Z0-9_]{0,63}$")


def actions_record(*, thread, messages) -> list[ActionEvent]:
    """Record each non-MEMORY token of the assistant messages; queue those with a webhook."""
    events = []
    for message in messages:
        if message.role != Role.ASSISTANT or "[[" not in message.content:
            continue
        tokens = [t for t in action_tokens(message.content) if t.name not in NOT_ACTIONS]
        for position, token in enumerate(tokens):
            events.append(
                ActionEvent(
                    thread=thread,
                    message=message,
                    position=position,
                    name=token.name,
                    argument=token.argument,
                )
            )
    if not events:
        return []
    hooked = set(
        ActionWebhook.objects.filter(
            project_id=thread.agent.project_id,
            active=True,
            name__in={event.name for event in events},
        ).values_list("name", flat=True)
    )
    # A list is in id order, and uuid7 ids of one millisecond are in random order: hand the
    # batch's ids out sorted, so the events keep the order they were written in.
    for event, event_id in zip(events, sorted(uuid7() for _ in events), strict=True):
        event.id = event_id
        if event.name in hooked:
            event.delivery = Delivery.PENDING
    ActionEvent.objects.bulk_create(events)
    for event in events:
        if event.delivery == Delivery.PENDING:
            job_enqueue(
                kind=JOB_KIND,
                key=str(event.id),
                payload={"event_id": str(event.id)},
                max_attempts=DELIVERY_ATTEMPTS,
            )
    return events


def webhook_problems(*, name: str, url: str) -> dict[str, str]:
    """Say what is wrong with a webhook's name and address (the address's host is resolved
    and checked at each delivery, since what it resolves to may change)."""
    problems = {}
    if not NAME.match(name or ""):
        problems["name"] = "Upper case letters, digits and _, starting with a letter."
    elif name in NOT_ACTIONS:
        problems["name"] = f"[[{name}: …]] stores a memory entry; it is not an action."
    try:
        parts = urlsplit(url or "")
        parts.port  # noqa: B018  (raises on a bad port)
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        problems["url"] = "An http or https address, e.g. https://hooks.example.com/spec."
    elif parts.username or parts.password:
        problems["url"] = "The address must not carry a user name or password."
    return problems


def action_secret(*, project_id) -> str:
    """Return the project's signing secret, making it on first use."""
    with transaction.atomic():
        found, _ = ActionSecret.objects.get_or_create(
            project_id=project_id, defaults={"secret": secrets.token_urlsafe(32)}
        )
    return found.secret


def webhook_address_problem(url: str) -> str | None:
    """Say why the outbound guard would refuse to POST to url now, or return None.

    The check of URL ingestion: http or https, and a host whose every address is public unless
    OUTBOUND_ALLOWED_NETWORKS allows it. Each delivery checks again (DNS answers change).
    """
    try:
        url_check(url)
    except OutboundRefused as exc:
        return f"Refused: {exc}"
    return None


def _webhook_state(webhook: ActionWebhook) -> dict:
    return {"name": webhook.name, "url": webhook.url, "active": webhook.active}


def webhook_save(*, webhook: ActionWebhook, actor: str) -> ActionWebhook:
    """Create or change a webhook (already validated), audited; its project gets a secret.

    Raises Conflict (409, code duplicate) when the project has another webhook of that name,
    and NotFound when the webhook to change was deleted meanwhile. Two saves of one name at
    once are told apart by the database's unique constraint, not by a read before the write:
    both would pass the read, and the second insert failed as a 500.
    """
    created = webhook._state.adding
    try:
        with transaction.atomic():
            before = None if created else _webhook_state(_webhook_locked(webhook.pk))
            webhook.save(force_insert=created, force_update=not created)
            action_secret(project_id=webhook.project_id)  # its deliveries are signed with it
            audit_record(
                actor=actor,
                action="action_webhook.create" if created else "action_webhook.update",
                object_type="action_webhook",
                object_id=webhook.id,
                project_id=webhook.project_id,
                summary=f"[[{webhook.name}: …]] → {webhook.url}",
                before=before,
                after=_webhook_state(webhook),
            )
    except IntegrityError:
        taken = ActionWebhook.objects.filter(project_id=webhook.project_id, name=webhook.name)
        if not taken.exclude(pk=webhook.pk).exists():
            raise
        message = f"The project already has a webhook for [[{webhook.name}: …]]; change that one."
        raise Conflict(f"name: {message}", details={"name": [message]}, code="duplicate") from None
    return webhook


def _webhook_locked(webhook_id) -> ActionWebhook:
    """Read a webhook to change, locked until the change commits; NotFound if it is gone (a
    plain save would have stored a deleted webhook again)."""
    found = ActionWebhook.objects.select_for_update().filter(pk=webhook_id).first()
    if found is None:
        raise NotFound("No such webhook: it was deleted meanwhile.")
    return found


def webhook_delete(*, webhook: ActionWebhook, actor: str) -> None:
    """Delete a webhook, audited; its pending deliveries are skipped."""
    with transaction.atomic():
        audit_record(
            actor=actor,
            action="action_webhook.delete",
            object_type="action_webhook",
            object_id=webhook.id,
            project_id=webhook.project_id,
            summary=f"[[{webhook.name}: …]] → {webhook.url}",
            before=_webhook_state(webhook),
        )
        webhook.delete()


def action_secret_rotate(*, project_id, actor: str) -> str:
    """Replace the project's signing secret, audited (without the secret); return the new one.

    Deliveries from now on are signed with the new secret, retries of earlier ones included.
    """
    with transaction.atomic():
        secret = secrets.token_urlsafe(32)
        ActionSecret.objects.update_or_create(project_id=project_id, defaults={"secret": secret})
        audit_record(
            actor=actor,
            action="action_secret.rotate",
            object_type="action_secret",
            object_id=project_id,
            project_id=project_id,
            summary="webhook signing secret rotated",
        )
    return secret
