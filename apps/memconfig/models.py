from django.db import models
from django.db.models import Q

from apps.core.models import BaseModel


class ConfigLevel(models.TextChoices):
    DEFAULT = "default"  # from the environment; read-only
    PROJECT = "project"
    AGENT = "agent"


class MemoryConfig(BaseModel):
    """The settings overridden at one level: a project's, or an agent's. Absent keys inherit."""

    project = models.ForeignKey(
        "tenancy.Project", on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    agent = models.ForeignKey(
        "tenancy.Agent", on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    values = models.JSONField(default=dict, blank=True)
    version = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(project__isnull=False, agent__isnull=True)
                | Q(project__isnull=True, agent__isnull=False),
                name="memory_config_one_level",
            ),
            models.UniqueConstraint(
                fields=["project"], condition=Q(agent__isnull=True), name="memory_config_project"
            ),
            models.UniqueConstraint(fields=["agent"], name="memory_config_agent"),
        ]

    def __str__(self):
        return f"config of {self.agent or self.project} v{self.version}"

    @property
    def level(self) -> str:
        return ConfigLevel.AGENT if self.agent_id else ConfigLevel.PROJECT


class MemoryConfigVersion(models.Model):
    """One change of a config level: who made it, when, and the values before and after."""

    config = models.ForeignKey(MemoryConfig, on_delete=models.CASCADE, related_name="versions")
    version = models.PositiveIntegerField()
    changed_by = models.CharField(max_length=200)
    changed_at = models.DateTimeField(auto_now_add=True)
    before = models.JSONField(default=dict)
    after = models.JSONField(default=dict)
    note = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["config", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["config", "version"], name="memory_config_version")
        ]

    def __str__(self):
        return f"{self.config} → v{self.version} by {self.changed_by}"
