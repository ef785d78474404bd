from django.db import models

from apps.core.ids import uuid7


class AuditEvent(models.Model):
    """One change to memory, config or keys: who made it, when, and the state before and after."""

    id = models.UUIDField(primary_key=True, default=uuid7, editable=False)
    at = models.DateTimeField(auto_now_add=True, db_index=True)
    actor = models.CharField(max_length=200, help_text="user:<name>, agent:<project>/<slug>, …")
    action = models.CharField(max_length=64, db_index=True)
    object_type = models.CharField(max_length=64)
    object_id = models.CharField(max_length=64, blank=True)
    project = models.ForeignKey(
        "tenancy.Project", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    summary = models.CharField(max_length=300, blank=True)
    # "<agent id>/<resource id>" when the change is about what an agent keeps of one end user
    # (audit_subject()): forgetting the end user blanks these rows' words, also of objects
    # deleted before. Plain text, not foreign keys: the row outlives both.
    subject = models.CharField(max_length=80, blank=True, db_index=True)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self):
        return f"{self.at:%Y-%m-%d %H:%M} {self.actor} {self.action} {self.object_type}"
