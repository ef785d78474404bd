import json
from dataclasses import dataclass

from apps.audit.models import AuditEvent


def audit_list(*, action: str | None = None, actor: str | None = None):
    events = AuditEvent.objects.select_related("project")
    if action:
        events = events.filter(action=action)
    if actor:
        events = events.filter(actor__icontains=actor)
    return events


def audit_actions() -> list[str]:
    return sorted(set(AuditEvent.objects.values_list("action", flat=True).distinct()))


def audit_search(*, action: str | None = None, actor: str | None = None, project_id=None):
    """Events newest first, narrowed by action, actor (substring) and project."""
    # Ids order by millisecond only; the timestamp keeps events of one millisecond in order.
    events = audit_list(action=action, actor=actor).order_by("-at", "-id")
    return events.filter(project_id=project_id) if project_id else events


@dataclass(frozen=True)
class AuditChange:
    key: str  # "" when before/after are not objects
    before: str  # compact JSON; "" when absent
    after: str


def audit_event_changes(*, event: AuditEvent) -> list[AuditChange]:
    """The top-level fields an event changed, as compact JSON, for a short before → after list."""
    before, after = event.before, event.after
    if isinstance(before or {}, dict) and isinstance(after or {}, dict):
        before, after = before or {}, after or {}
        keys = [
            key
            for key in sorted(before.keys() | after.keys())
            if before.get(key, _MISSING) != after.get(key, _MISSING)
        ]
        return [
            AuditChange(
                key=key,
                before=_compact(before[key]) if key in before else "",
                after=_compact(after[key]) if key in after else "",
            )
            for key in keys
        ]
    if before == after:
        return []
    return [
        AuditChange(
            key="",
            before="" if before is None else _compact(before),
            after="" if after is None else _compact(after),
        )
    ]


def audit_pretty(value) -> str:
    """Indented JSON of a before/after value, for reading in full."""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=str)


def _compact(value) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


_MISSING = object()
