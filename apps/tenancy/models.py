from django.db import models

from apps.core.models import BaseModel


class Project(BaseModel):
    """A namespace: owns agents, knowledge bases, shared notes and a config override."""

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self):
        return self.slug


class Agent(BaseModel):
    """A program that calls the API with its own keys; belongs to one project."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="agents")
    slug = models.SlugField(max_length=64)
    name = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["project__slug", "slug"]
        constraints = [
            models.UniqueConstraint(fields=["project", "slug"], name="agent_slug_unique_in_project")
        ]

    def __str__(self):
        return f"{self.project.slug}/{self.slug}"


class KeyScope(models.TextChoices):
    AGENT = "agent"  # the agent's own threads and memory
    ADMIN = "admin"  # and its project's memory settings and action webhooks


class ApiKey(BaseModel):
    """A bearer key of an agent. Only its SHA-256 is stored; the prefix identifies it."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=100, blank=True)
    prefix = models.CharField(max_length=16, unique=True)
    key_hash = models.CharField(max_length=64)
    scope = models.CharField(
        max_length=16,
        choices=KeyScope.choices,
        default=KeyScope.AGENT,
        help_text="admin: may also read and change the project's memory settings and webhooks.",
    )
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return f"mc_{self.prefix}_…"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    @property
    def is_admin(self) -> bool:
        return self.scope == KeyScope.ADMIN


class Resource(BaseModel):
    """The end user or entity an agent serves, by the caller's own id; unique per project."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="resources")
    external_id = models.CharField(max_length=200)
    metadata = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["external_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "external_id"], name="resource_unique_in_project"
            )
        ]

    def __str__(self):
        return self.external_id
