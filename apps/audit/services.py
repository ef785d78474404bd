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
    )


FORGOTTEN = "[forgotten]"


def audit_redact(*, object_type: str, object_ids: list[str]) -> int:
    """Blank the words of the audit rows about these objects; return how many rows changed.

    Who, when, which action and which object stay; the summary becomes FORGOTTEN, and in
    before / after each field keeps its name and its numbers (a version, a count) while any
    other value, text or nested, becomes FORGOTTEN.
    """
    changed = 0
    for start in range(0, len(object_ids), 500):
        rows = list(
            AuditEvent.objects.filter(
                object_type=object_type, object_id__in=object_ids[start : start + 500]
            )
        )
        for row in rows:
            row.summary = FORGOTTEN
            row.before, row.after = _redacted(row.before), _redacted(row.after)
        changed += AuditEvent.objects.bulk_update(rows, ["summary", "before", "after"])
    return changed


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
