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
