"""Record the action tokens of assistant messages, and queue their webhook deliveries.

The receiver of messages_appended runs inside the append's transaction: the events and their
queued deliveries commit or roll back with the messages. Parsing is a regex over text the
append already holds, so the append never waits on a webhook.
"""

import re
import secrets
from urllib.parse import urlsplit

from django.db import transaction

from apps.actions.models import ActionEvent, ActionSecret, ActionWebhook, Delivery
from apps.core.ids import uuid7
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
