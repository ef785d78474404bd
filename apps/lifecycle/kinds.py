"""What an end user of an agent has in memory today, registered kind by kind (registry.py).

The roots are deleted first to last: entries before the threads they were taken from, so that
none is left pointing at a deleted message; then the threads, which take everything of theirs
along; then the profile. Search items and vectors go with their message or entry.
"""

from django.db.models import Q

from apps.episodic.models import MemoryEntry
from apps.lifecycle.registry import kind_register
from apps.profiles.models import UserProfile
from apps.threads.models import Thread

# Roots.
kind_register(
    "entries",
    "episodic.MemoryEntry",
    # Entries of this end user, and entries of the agent taken from their threads even when
    # filed without a resource: derived from deleted messages, they go with them.
    roots=lambda scope: MemoryEntry.objects.filter(
        Q(agent=scope.agent, resource=scope.resource)
        | Q(agent=scope.agent, thread_id__in=scope.thread_ids)
        | Q(agent=scope.agent, message__thread_id__in=scope.thread_ids)
    ),
)
kind_register(
    "threads",
    "threads.Thread",
    roots=lambda scope: Thread.objects.filter(pk__in=scope.thread_ids),
)
kind_register(
    "profiles",
    "profiles.UserProfile",
    roots=lambda scope: UserProfile.objects.filter(agent=scope.agent, resource=scope.resource),
)

# Deleted with their thread, run, message or entry.
kind_register("messages", "threads.Message")
kind_register("runs", "threads.Run")
kind_register("session_memories", "profiles.SessionMemory")
kind_register("context_snapshots", "context.ContextSnapshot")
kind_register("run_snapshots", "runstate.RunSnapshot")
kind_register("plans", "runstate.Plan")
kind_register("iterations", "runstate.IterationLog")
kind_register("checkpoints", "runstate.Checkpoint")
kind_register("observations", "observations.Observation")
kind_register("observation_progress", "observations.ObservationProgress")
kind_register("observation_failures", "observations.ObservationFailure")
kind_register("summaries", "observations.ThreadSummary")
kind_register("search_items", "search.SearchItem")
kind_register("vectors", "search.ItemEmbedding")
kind_register("extraction_runs", "episodic.ExtractionRun")
kind_register("consolidation_progress", "episodic.ConsolidationProgress")
kind_register("artifacts", "runstate.Artifact")
kind_register("action_events", "actions.ActionEvent")
