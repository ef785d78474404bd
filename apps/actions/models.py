from django.core.exceptions import ValidationError
from django.db import models

from apps.core.models import BaseModel

NAME_HELP = "The token's name, as in [[TRIGGER_SPEC: …]]: upper case letters, digits and _."


class ActionWebhook(BaseModel):
    """Where a project's `[[NAME: argument]]` actions of one name are POSTed by the worker."""

    project = models.ForeignKey("tenancy.Project", on_delete=models.CASCADE, related_name="+")
    name = models.CharField(max_length=64, help_text=NAME_HELP)
    url = models.CharField(
        max_length=2000,
        help_text="An http or https address; private and loopback addresses are refused unless "
        "OUTBOUND_ALLOWED_NETWORKS allows them.",
    )
    active = models.BooleanField(default=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["project", "name"], name="action_webhook_unique")
        ]

    def clean(self):
        from apps.actions.services import webhook_problems

        problems = webhook_problems(name=self.name, url=self.url)
        if problems:
            raise ValidationError(problems)

    def __str__(self):
        return f"{self.name} → {self.url}"


class ActionSecret(BaseModel):
    """The project's key for signing webhook deliveries (HMAC-SHA256); made on first use."""

    project = models.OneToOneField("tenancy.Project", on_delete=models.CASCADE, related_name="+")
    secret = models.CharField(max_length=100)

    def __str__(self):
        return f"webhook secret of {self.project_id}"


class Delivery(models.TextChoices):
    NONE = "none"  # no webhook for the name when the action was recorded
    PENDING = "pending"  # queued, or failed and waiting for its next attempt
    DELIVERED = "delivered"
    FAILED = "failed"  # refused, or still failing after the last attempt
    SKIPPED = "skipped"  # the webhook was removed or turned off before delivery


class ActionEvent(BaseModel):
    """One `[[NAME: argument]]` token of an assistant message, and its webhook delivery."""

    thread = models.ForeignKey("threads.Thread", on_delete=models.CASCADE, related_name="+")
    message = models.ForeignKey("threads.Message", on_delete=models.CASCADE, related_name="+")
    position = models.PositiveIntegerField()  # which token of the message, from 0
    name = models.CharField(max_length=64)
    argument = models.TextField()
    delivery = models.CharField(max_length=16, choices=Delivery.choices, default=Delivery.NONE)
    attempts = models.PositiveIntegerField(default=0)
    response_status = models.PositiveIntegerField(null=True, blank=True)
    error = models.TextField(blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["message", "position"], name="action_event_unique")
        ]
        indexes = [models.Index(fields=["thread", "id"], name="action_event_thread")]

    def __str__(self):
        return f"[[{self.name}: …]] ({self.delivery})"
