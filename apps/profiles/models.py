from django.db import models

from apps.core.models import BaseModel

# Limits of what an agent may store; the API refuses more with a 400 naming the field and limit.
# A profile and a session memory go into every context, so they stay a small part of its budget.
PROFILE_MAX_CHARS = 20_000
OBJECTIVE_MAX_CHARS = 2_000
STATE_MAX_CHARS = 10_000
LIST_MAX_ITEMS = 100  # decisions, follow_ups
LIST_ITEM_MAX_CHARS = 1_000


class UserProfile(BaseModel):
    """What one agent remembers about one end user, as markdown; `version` guards each write."""

    agent = models.ForeignKey("tenancy.Agent", on_delete=models.CASCADE, related_name="+")
    resource = models.ForeignKey(
        "tenancy.Resource", on_delete=models.CASCADE, related_name="profiles"
    )
    content = models.TextField(blank=True)
    version = models.PositiveIntegerField(default=1)
    updated_by = models.CharField(max_length=200, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["agent", "resource"], name="profile_unique_per_agent")
        ]

    def __str__(self):
        return f"profile v{self.version} of {self.resource_id} by {self.agent_id}"


class SessionMemory(BaseModel):
    """The current state of one thread: objective, decisions, state and follow-ups."""

    thread = models.OneToOneField(
        "threads.Thread", on_delete=models.CASCADE, related_name="session_memory"
    )
    objective = models.TextField(blank=True)
    decisions = models.JSONField(default=list, blank=True)
    state = models.TextField(blank=True)
    follow_ups = models.JSONField(default=list, blank=True)
    version = models.PositiveIntegerField(default=1)
    updated_by = models.CharField(max_length=200, blank=True)

    class Meta:
        verbose_name_plural = "session memories"

    def __str__(self):
        return f"session memory v{self.version} of {self.thread_id}"
