from django.urls import path, register_converter

from apps.api.v1 import (
    actions,
    admin_config,
    admin_webhooks,
    artifacts,
    briefing,
    checkpoints,
    context,
    episodic,
    knowledge,
    memory,
    messages,
    notes,
    observations,
    plans,
    profiles,
    resources,
    run_start,
    runs,
    search,
    threads,
    tools,
)
from apps.core.converters import AnyCaseUUIDConverter, EndUserIdConverter

register_converter(AnyCaseUUIDConverter, "id")
register_converter(EndUserIdConverter, "end_user")
app_name = "v1"

urlpatterns = [
    path("threads", threads.ThreadListApi.as_view(), name="threads"),
    path("threads/<id:thread_id>", threads.ThreadDetailApi.as_view(), name="thread"),
    path("threads/<id:thread_id>/messages", messages.MessageListApi.as_view(), name="messages"),
    path("threads/<id:thread_id>/runs", runs.RunStartApi.as_view(), name="runs"),
    path("threads/<id:thread_id>/plan", plans.PlanApi.as_view(), name="plan"),
    path("threads/<id:thread_id>/actions", actions.ActionListApi.as_view(), name="actions"),
    path(
        "threads/<id:thread_id>/session-memory",
        profiles.SessionMemoryApi.as_view(),
        name="session-memory",
    ),
    path("resources/<end_user:resource_id>/profile", profiles.ProfileApi.as_view(), name="profile"),
    # After the profile's route, which this one (a path, as ids may hold "/") would swallow.
    path("resources/<end_user:resource_id>", resources.ResourceApi.as_view(), name="resource"),
    path(
        "threads/<id:thread_id>/iterations",
        plans.IterationListApi.as_view(),
        name="iterations",
    ),
    path(
        "threads/<id:thread_id>/observations",
        observations.ObservationListApi.as_view(),
        name="observations",
    ),
    path("threads/<id:thread_id>/summary", observations.SummaryApi.as_view(), name="summary"),
    path("runs", run_start.RunOpenApi.as_view(), name="runs-open"),
    path("threads/<id:thread_id>/briefing", briefing.BriefingApi.as_view(), name="briefing"),
    path("tools", tools.ToolListApi.as_view(), name="tools"),
    path("tools/call", tools.ToolCallApi.as_view(), name="tools-call"),
    path("runs/<id:run_id>", runs.RunDetailApi.as_view(), name="run"),
    path("runs/<id:run_id>/finish", runs.RunFinishApi.as_view(), name="run-finish"),
    path(
        "runs/<id:run_id>/checkpoints",
        checkpoints.CheckpointListApi.as_view(),
        name="checkpoints",
    ),
    path(
        "runs/<id:run_id>/artifacts",
        artifacts.ArtifactUploadApi.as_view(),
        name="artifacts-upload",
    ),
    path("threads/<id:thread_id>/artifacts", artifacts.ArtifactListApi.as_view(), name="artifacts"),
    path("artifacts/<id:artifact_id>", artifacts.ArtifactDetailApi.as_view(), name="artifact"),
    path("runs/<id:run_id>/snapshot", checkpoints.SnapshotApi.as_view(), name="snapshot"),
    path(
        "checkpoints/<id:checkpoint_id>",
        checkpoints.CheckpointDetailApi.as_view(),
        name="checkpoint",
    ),
    path(
        "checkpoints/<id:checkpoint_id>/resume",
        checkpoints.CheckpointResumeApi.as_view(),
        name="checkpoint-resume",
    ),
    path("threads/<id:thread_id>/context", context.ContextApi.as_view(), name="context"),
    path("threads/<id:thread_id>/contexts", context.ContextListApi.as_view(), name="contexts"),
    path("contexts/<id:context_id>", context.ContextDetailApi.as_view(), name="context-read"),
    path(
        "contexts/<id:context_a>/diff/<id:context_b>",
        context.ContextDiffApi.as_view(),
        name="contexts-diff",
    ),
    # PATCH and the paths below: project-admin keys only (apps/api/v1/admin_*.py).
    path("config", admin_config.ConfigApi.as_view(), name="config"),
    path("config/level", admin_config.ConfigLevelApi.as_view(), name="config-level"),
    path("config/versions", admin_config.ConfigVersionListApi.as_view(), name="config-versions"),
    path("config/rollback", admin_config.ConfigRollbackApi.as_view(), name="config-rollback"),
    path("webhooks", admin_webhooks.WebhookListApi.as_view(), name="webhooks"),
    path("webhooks/secret", admin_webhooks.WebhookSecretApi.as_view(), name="webhook-secret"),
    path(
        "webhooks/secret/rotate",
        admin_webhooks.WebhookSecretRotateApi.as_view(),
        name="webhook-secret-rotate",
    ),
    path("webhooks/<id:webhook_id>", admin_webhooks.WebhookDetailApi.as_view(), name="webhook"),
    path("search", search.SearchApi.as_view(), name="search"),
    path("episodic", episodic.EntryListApi.as_view(), name="entries"),
    path("episodic/recall", episodic.EntryRecallApi.as_view(), name="entries-recall"),
    path("episodic/<id:entry_id>", episodic.EntryDetailApi.as_view(), name="entry"),
    path("knowledge-bases", knowledge.KnowledgeBaseListApi.as_view(), name="knowledge-bases"),
    path(
        "knowledge-bases/<slug:kb_slug>/documents",
        knowledge.DocumentListApi.as_view(),
        name="documents",
    ),
    path("documents/<id:document_id>", knowledge.DocumentDetailApi.as_view(), name="document"),
    path(
        "documents/<id:document_id>/reindex",
        knowledge.DocumentReindexApi.as_view(),
        name="document-reindex",
    ),
    path(
        "documents/<id:document_id>/chunks",
        knowledge.DocumentChunksApi.as_view(),
        name="document-chunks",
    ),
    path("notes", notes.NoteListApi.as_view(), name="notes"),
    path("notes/<id:note_id>", notes.NoteDetailApi.as_view(), name="note"),
    path("memory/upsert", memory.MemoryUpsertApi.as_view(), name="memory-upsert"),
    path("memory/search", memory.MemorySearchApi.as_view(), name="memory-search"),
]
