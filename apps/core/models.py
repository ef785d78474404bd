from django.db import models

from apps.core.ids import uuid7


class BaseModel(models.Model):
    """Common columns: a time-ordered UUID key and creation / update times."""

    id = models.UUIDField(primary_key=True, default=uuid7, editable=False)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True
