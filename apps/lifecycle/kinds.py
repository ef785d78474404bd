"""What an end user of an agent has in memory today, registered kind by kind (registry.py).

The roots are deleted first to last: entries before the threads they were taken from, so that
none is left pointing at a deleted message; then the threads, which take everything of theirs
along; then the profile. Search items and vectors go with their message or entry.
"""

from django.db.models import Q

from apps.episodic.models import MemoryEntry
from apps.lifecycle.registry import audited_register, kind_register
from apps.profiles.models import SessionMemory, UserProfile
from apps.runstate.models import Artifact, Checkpoint
from apps.threads.models import Thread


def _entries(scope):
    # Entries of this end user, and entries of the agent taken from their threads even when
    # filed without a resource: derived from deleted messages, they go with them.
    return MemoryEntry.objects.filter(
        Q(agent=scope.agent, resource=scope.resource)
        | Q(agent=scope.agent, thread_id__in=scope.thread_ids)
        | Q(agent=scope.agent, message__thread_id__in=scope.thread_ids)
    )


def _threads(scope):
    return Thread.objects.filter(pk__in=scope.thread_ids)


def _profiles(scope):
    return UserProfile.objects.filter(agent=scope.agent, resource=scope.resource)


# Roots.
kind_register("entries", "episodic.MemoryEntry", roots=_entries)
kind_register("threads", "threads.Thread", roots=_threads)
kind_register("profiles", "profiles.UserProfile", roots=_profiles)

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

# The audit rows of these rows hold the end user's words (an entry's text, the profile, the
# session memory, an artifact's name, a checkpoint's resume input): forgetting blanks them.
audited_register("memory_entry", _entries)
audited_register("thread", _threads)
audited_register("user_profile", _profiles)
audited_register(
    "session_memory", lambda scope: SessionMemory.objects.filter(thread_id__in=scope.thread_ids)
)
audited_register(
    "checkpoint", lambda scope: Checkpoint.objects.filter(run__thread_id__in=scope.thread_ids)
)
audited_register("artifact", lambda scope: Artifact.objects.filter(thread_id__in=scope.thread_ids))
