from django.db import models
from django.db.models import Q

from apps.core.models import BaseModel


class NoteScope(models.TextChoices):
    PERSONAL = "personal"  # one agent's own notes
    SHARED = "shared"  # every agent of the project reads and writes them


class Note(BaseModel):
    """A markdown note of the long-term tier: personal to an agent, or shared by its project.

    A path names the note within its scope (`ops/deploy.md`); `[[ops/deploy]]` in another
    note's content links to it. `version` grows by one with every change, so a writer can say
    which version it read and a stale write is refused.
    """

    project = models.ForeignKey("tenancy.Project", on_delete=models.CASCADE, related_name="+")
    # The owner of a personal note; None for a shared note.
    agent = models.ForeignKey(
        "tenancy.Agent", on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    scope = models.CharField(max_length=16, choices=NoteScope.choices)
    path = models.CharField(max_length=255)
    title = models.CharField(max_length=300, blank=True)
    content = models.TextField(blank=True)
    tags = models.JSONField(default=list, blank=True)
    version = models.PositiveIntegerField(default=1)
    updated_by = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["path"]
        # One note per path and scope. Two partial constraints, because a unique index treats
        # the NULL agent of shared notes as distinct on both backends.
        constraints = [
            models.UniqueConstraint(
                fields=["agent", "path"],
                condition=Q(agent__isnull=False),
                name="note_path_unique_personal",
            ),
            models.UniqueConstraint(
                fields=["project", "path"],
                condition=Q(agent__isnull=True),
                name="note_path_unique_shared",
            ),
            models.CheckConstraint(
                condition=Q(scope="personal", agent__isnull=False)
                | Q(scope="shared", agent__isnull=True),
                name="note_scope_matches_owner",
            ),
        ]
        indexes = [models.Index(fields=["project", "agent", "path"], name="note_scope_path")]

    def __str__(self):
        return f"{self.scope}:{self.path}"


class NoteLink(models.Model):
    """A `[[wikilink]]` in a note's content, by the path it names.

    Links are kept by path, not by the note they reach: a link to a missing note stays (and
    shows as missing) and resolves by itself once a note with that path is written.
    """

    source = models.ForeignKey(Note, on_delete=models.CASCADE, related_name="links")
    target_path = models.CharField(max_length=255)
    position = models.PositiveIntegerField()  # the order the links appear in the content

    class Meta:
        ordering = ["source", "position"]
        constraints = [
            models.UniqueConstraint(fields=["source", "target_path"], name="note_link_unique")
        ]
        indexes = [models.Index(fields=["target_path"], name="note_link_target")]

    def __str__(self):
        return f"{self.source_id} → {self.target_path}"


class NoteTag(models.Model):
    """One tag of a note, for filtering by tag (SQLite has no JSON containment lookup); the
    note's `tags` field keeps them in the order they were given and is what is shown."""

    note = models.ForeignKey(Note, on_delete=models.CASCADE, related_name="tag_rows")
    tag = models.CharField(max_length=64)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["note", "tag"], name="note_tag_unique")]
        indexes = [models.Index(fields=["tag"], name="note_tag")]

    def __str__(self):
        return self.tag
