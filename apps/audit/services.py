"""Record changes. Services that change memory, config or keys call audit_record()."""

from apps.audit.models import AuditEvent


def audit_record(
    *,
    actor: str,
    action: str,
    object_type: str,
    object_id="",
    project_id=None,
    summary: str = "",
    before=None,
    after=None,
    subject: str = "",
) -> AuditEvent:
    return AuditEvent.objects.create(
        actor=actor[:200],
        action=action,
        object_type=object_type,
        object_id=str(object_id),
        project_id=project_id,
        summary=summary[:300],
        before=before,
        after=after,
        subject=subject,
    )


def audit_subject(agent_id, resource_id) -> str:
    """Name what an agent keeps of one end user, for audit_record(subject=...); "" for none."""
    return f"{agent_id}/{resource_id}" if agent_id and resource_id else ""


FORGOTTEN = "[forgotten]"


def audit_redact(*, object_type: str, object_ids: list[str]) -> int:
    """Blank the words of the audit rows about these objects; return how many rows changed.

    Who, when, which action and which object stay; the summary becomes FORGOTTEN, and in
    before / after each field keeps its name and its numbers (a version, a count) while any
    other value, text or nested, becomes FORGOTTEN.
    """
    changed = 0
    for start in range(0, len(object_ids), 500):
        ids = object_ids[start : start + 500]
        changed += _redact(AuditEvent.objects.filter(object_type=object_type, object_id__in=ids))
    return changed


def audit_redact_subject(*, subject: str) -> int:
    """Blank the words of every audit row about this subject (audit_subject()), as above."""
    return _redact(AuditEvent.objects.filter(subject=subject)) if subject else 0


def _redact(rows) -> int:
    rows = list(rows.exclude(summary=FORGOTTEN))
    for row in rows:
        row.summary = FORGOTTEN
        row.before, row.after = _redacted(row.before), _redacted(row.after)
    return AuditEvent.objects.bulk_update(rows, ["summary", "before", "after"], batch_size=500)


def _redacted(state):
    if state is None:
        return None
    if not isinstance(state, dict):
        return FORGOTTEN
    return {
        key: value
        if value is None or (isinstance(value, (int, float)) and not isinstance(value, bool))
        else FORGOTTEN
        for key, value in state.items()
    }
