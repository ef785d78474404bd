from django.db import models

from apps.search.fields import EmbeddingField


class ItemKind(models.TextChoices):
    MESSAGE = "message"
    CHUNK = "chunk"
    ENTRY = "entry"
    NOTE = "note"
    ARTIFACT = "artifact"


class SearchItem(models.Model):
    """One searchable text (a message, a chunk, an entry, a note, an artifact) with its scope.

    The integer key is the rowid the SQLite FTS5 index refers to; PostgreSQL keeps a generated
    tsvector column with a GIN index on this table (both made in migration 0002).
    """

    id = models.BigAutoField(primary_key=True)
    kind = models.CharField(max_length=16, choices=ItemKind.choices)
    # The composite indexes in Meta lead with project, agent, thread and knowledge base, so
    # those foreign keys need no single-column index of their own (one less write per row).
    project = models.ForeignKey(
        "tenancy.Project", on_delete=models.CASCADE, related_name="+", db_index=False
    )
    agent = models.ForeignKey(
        "tenancy.Agent", on_delete=models.CASCADE, null=True, related_name="+", db_index=False
    )
    resource = models.ForeignKey(
        "tenancy.Resource", on_delete=models.SET_NULL, null=True, related_name="+"
    )
    thread = models.ForeignKey(
        "threads.Thread", on_delete=models.CASCADE, null=True, related_name="+", db_index=False
    )
    knowledge_base = models.ForeignKey(
        "knowledge.KnowledgeBase",
        on_delete=models.CASCADE,
        null=True,
        related_name="+",
        db_index=False,
    )
    message = models.OneToOneField(
        "threads.Message", on_delete=models.CASCADE, null=True, related_name="search_item"
    )
    chunk = models.OneToOneField(
        "knowledge.Chunk", on_delete=models.CASCADE, null=True, related_name="search_item"
    )
    entry = models.OneToOneField(
        "episodic.MemoryEntry", on_delete=models.CASCADE, null=True, related_name="search_item"
    )
    # A plain foreign key, not a one-to-one: adding a unique column makes SQLite rebuild the
    # table, which drops the full-text triggers of migration 0002; a partial unique index
    # (Meta) keeps one item per note instead.
    note = models.ForeignKey(
        "notes.Note", on_delete=models.CASCADE, null=True, related_name="+", db_index=False
    )
    # A text artifact of a run, kept the same way as notes (a partial unique index in Meta).
    artifact = models.ForeignKey(
        "runstate.Artifact", on_delete=models.CASCADE, null=True, related_name="+", db_index=False
    )
    content = models.TextField()
    # False hides the item from search: a chunk of a document not yet ready, an entry not approved.
    visible = models.BooleanField(default=True)
    created_at = models.DateTimeField()

    class Meta:
        indexes = [
            models.Index(fields=["project", "kind", "id"], name="search_item_project_kind"),
            models.Index(fields=["thread", "id"], name="search_item_thread"),
            models.Index(fields=["agent", "resource", "kind"], name="search_item_agent_resource"),
            models.Index(fields=["knowledge_base", "id"], name="search_item_kb"),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["note"], condition=models.Q(note__isnull=False), name="search_item_note"
            ),
            models.UniqueConstraint(
                fields=["artifact"],
                condition=models.Q(artifact__isnull=False),
                name="search_item_artifact",
            ),
        ]

    def __str__(self):
        return f"{self.kind} {self.id}"


class ItemEmbedding(models.Model):
    """The vector of one item under one embedding model.

    Scope columns are copied from the item so a filtered nearest-neighbour query reads one table.
    """

    id = models.BigAutoField(primary_key=True)
    item = models.ForeignKey(SearchItem, on_delete=models.CASCADE, related_name="embeddings")
    model = models.CharField(max_length=100)
    dims = models.PositiveSmallIntegerField()
    vector = EmbeddingField()
    kind = models.CharField(max_length=16, choices=ItemKind.choices)
    project_id = models.UUIDField()
    agent_id = models.UUIDField(null=True)
    resource_id = models.UUIDField(null=True)
    thread_id = models.UUIDField(null=True)
    knowledge_base_id = models.UUIDField(null=True)
    visible = models.BooleanField(default=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["item", "model", "dims"], name="embedding_unique_per_model"
            )
        ]
        indexes = [
            models.Index(fields=["model", "project_id", "kind"], name="embedding_project_kind"),
            models.Index(fields=["model", "thread_id"], name="embedding_thread"),
            models.Index(fields=["model", "knowledge_base_id"], name="embedding_kb"),
            models.Index(fields=["model", "agent_id", "resource_id"], name="embedding_agent"),
        ]

    def __str__(self):
        return f"{self.model} vector of {self.item_id}"


class VectorIndexStatus(models.TextChoices):
    BUILDING = "building"
    READY = "ready"
    RETIRED = "retired"


class VectorIndex(models.Model):
    """The vectors of one project under one embedding model.

    A new model gets a `building` index, filled in the background while the previous `ready`
    one keeps serving; when every item has a vector the new one becomes `ready` and the old one
    is retired and its vectors deleted. So dimensions never mix in one search.
    """

    project = models.ForeignKey("tenancy.Project", on_delete=models.CASCADE, related_name="+")
    model = models.CharField(max_length=100)
    dims = models.PositiveSmallIntegerField()
    status = models.CharField(
        max_length=16, choices=VectorIndexStatus.choices, default=VectorIndexStatus.BUILDING
    )
    created_at = models.DateTimeField(auto_now_add=True)
    ready_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["project", "model", "dims"],
                condition=~models.Q(status="retired"),
                name="vector_index_live_per_model",
            )
        ]

    def __str__(self):
        return f"{self.model}/{self.dims} ({self.status})"
