"""The worker's delivery of an action to its webhook: signed, retried, its outcome recorded.

The body is JSON; `X-Memory-Console-Signature: sha256=<hex>` is the HMAC-SHA256, keyed with the
project's secret, of `<X-Memory-Console-Timestamp>.` followed by the body, so a receiver can
check both who sent it and when. The POST goes through apps.core.outbound: http and https
only, and no private, loopback or link-local address unless OUTBOUND_ALLOWED_NETWORKS allows it.
"""

import hashlib
import hmac
import json
import time

from django.db.models import F
from django.utils import timezone

from apps.actions.models import ActionEvent, Delivery
from apps.actions.selectors import webhook_for
from apps.actions.services import JOB_KIND, action_secret
from apps.core import outbound
from apps.jobs.registry import job_failure_handler, job_handler
from apps.jobs.services import PermanentJobError

TIMEOUT = 10.0  # seconds for the whole POST
SIGNATURE_HEADER = "X-Memory-Console-Signature"
TIMESTAMP_HEADER = "X-Memory-Console-Timestamp"


def signature(secret: str, timestamp: str, body: bytes) -> str:
    digest = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256)
    return f"sha256={digest.hexdigest()}"


def _body(event: ActionEvent) -> bytes:
    agent = event.thread.agent
    return json.dumps(
        {
            "id": str(event.id),
            "name": event.name,
            "argument": event.argument,
            "thread_id": str(event.thread_id),
            "message_id": str(event.message_id),
            "project": agent.project.slug,
            "agent": agent.slug,
            "created_at": event.created_at.isoformat(),
        }
    ).encode()


def _record(event: ActionEvent, **fields) -> None:
    ActionEvent.objects.filter(pk=event.pk).update(updated_at=timezone.now(), **fields)


@job_handler(JOB_KIND)
def run_delivery(job) -> None:
    event = (
        ActionEvent.objects.select_related("thread__agent__project")
        .filter(pk=job.payload["event_id"])
        .first()
    )
    if event is None:
        return  # deleted with its thread
    project = event.thread.agent.project
    webhook = webhook_for(project_id=project.id, name=event.name)
    if webhook is None:
        _record(event, delivery=Delivery.SKIPPED, error="The webhook was removed or turned off.")
        return
    body = _body(event)
    timestamp = str(int(time.time()))
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "MemoryConsole/1 (+action webhooks)",
        TIMESTAMP_HEADER: timestamp,
        SIGNATURE_HEADER: signature(action_secret(project_id=project.id), timestamp, body),
        "X-Memory-Console-Action": event.name,
    }
    _record(event, attempts=F("attempts") + 1)
    try:
        posted = outbound.post(webhook.url, body=body, headers=headers, timeout=TIMEOUT)
    except outbound.OutboundRefused as exc:
        _record(event, delivery=Delivery.FAILED, error=f"Refused: {exc}")
        raise PermanentJobError(str(exc)) from None
    except outbound.OutboundError as exc:
        _record(event, error=str(exc), response_status=exc.status)
        if not exc.retryable:
            _record(event, delivery=Delivery.FAILED)
            raise PermanentJobError(str(exc)) from None
        raise  # the job system tries again later
    _record(
        event,
        delivery=Delivery.DELIVERED,
        response_status=posted.status,
        error="",
        delivered_at=timezone.now(),
    )


@job_failure_handler(JOB_KIND)
def delivery_failed(job, error: str) -> None:
    ActionEvent.objects.filter(pk=job.payload["event_id"]).exclude(
        delivery=Delivery.DELIVERED
    ).update(delivery=Delivery.FAILED, error=error, updated_at=timezone.now())
