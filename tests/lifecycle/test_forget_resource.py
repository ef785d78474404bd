"""Forgetting one end user of an agent: DELETE /api/v1/resources/{id} and `forget_resource`."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db.models import Q

from apps.actions.models import ActionEvent
from apps.context.models import ContextSnapshot
from apps.episodic.models import ConsolidationProgress, ExtractionRun, MemoryEntry
from apps.jobs.services import job_run_pending
from apps.memconfig.services import config_update
from apps.observations.models import Observation, ObservationProgress, ThreadSummary
from apps.profiles.models import SessionMemory, UserProfile
from apps.runstate.models import Artifact, Checkpoint, IterationLog, Plan, RunSnapshot
from apps.search.models import ItemEmbedding, SearchItem
from apps.tenancy.models import Resource
from apps.threads.models import Message, Run, Thread
from tests.conftest import make_actor

LONG = [
    {"role": "user", "content": f"step {n} of the boiler repair " + "word " * 200} for n in range(8)
]


def _live_conversation(actor, resource_id: str, *, compaction: bool = False) -> dict:
    """Give the actor a thread with the end user holding one row of every kind, as clients do."""
    thread = actor.new_thread(resource_id=resource_id, channel="web", external_id=resource_id)
    run = actor.post(f"/api/v1/threads/{thread['id']}/runs", {}).json()
    first, *_ = actor.append(
        thread["id"],
        {"role": "user", "content": "My boiler at Elm Street leaks", "run_id": run["id"]},
        {"role": "assistant", "content": "A plumber comes on Monday", "run_id": run["id"]},
        {"role": "assistant", "content": "[[SCHEDULE: plumber Monday]]", "run_id": run["id"]},
    )
    actor.post(
        f"/api/v1/runs/{run['id']}/artifacts",
        {"name": "quote.txt", "kind": "text", "content": "Repair quote"},
    )
    actor.put(f"/api/v1/threads/{thread['id']}/plan", {"version": 0, "goal": "fix it"})
    actor.post(f"/api/v1/threads/{thread['id']}/iterations", {"task": "call", "outcome": "failed"})
    actor.post(f"/api/v1/runs/{run['id']}/checkpoints", {"state": {"step": 1}})
    actor.put(f"/api/v1/runs/{run['id']}/snapshot", {"tree": {"root": []}})
    actor.put(f"/api/v1/threads/{thread['id']}/session-memory", {"version": 0, "objective": "x"})
    actor.put(f"/api/v1/resources/{resource_id}/profile", {"version": 0, "content": "Tenant."})
    actor.post("/api/v1/episodic", {"content": "Has a leaking boiler", "resource_id": resource_id})
    # Taken from the end user's message but filed for the agent as a whole (no resource).
    actor.post(
        "/api/v1/episodic",
        {
            "content": "Elm Street boilers leak",
            "thread_id": thread["id"],
            "message_id": first["id"],
            "source": "user_assertion",
            "evidence": "boiler at Elm Street leaks",
        },
    )
    if compaction:
        config_update(
            agent=actor.agent,
            changes={
                "context_strategy": "compaction",
                "compaction_budget_tokens": 1000,
                "recent_window": 2,
            },
            changed_by="test",
        )
        actor.append(thread["id"], *LONG)
    actor.post(f"/api/v1/threads/{thread['id']}/context", {"query": "boiler"})
    job_run_pending()  # vectors, the summary
    call_command("consolidate", thread=thread["id"], stdout=StringIO())  # consolidated entries
    return thread


def _rows_of(agent, resource) -> dict[str, int]:
    """Count, by its own queries, what the agent keeps of the end user."""
    threads = Thread.objects.filter(agent=agent, resource=resource)
    runs = Run.objects.filter(thread__in=threads)
    entries = MemoryEntry.objects.filter(
        Q(agent=agent, resource=resource) | Q(agent=agent, thread__in=threads)
    )
    items = SearchItem.objects.filter(Q(thread__in=threads) | Q(entry__in=entries))
    return {
        "threads": threads.count(),
        "messages": Message.objects.filter(thread__in=threads).count(),
        "runs": runs.count(),
        "entries": entries.count(),
        "profiles": UserProfile.objects.filter(agent=agent, resource=resource).count(),
        "session_memories": SessionMemory.objects.filter(thread__in=threads).count(),
        "context_snapshots": ContextSnapshot.objects.filter(thread__in=threads).count(),
        "plans": Plan.objects.filter(thread__in=threads).count(),
        "iterations": IterationLog.objects.filter(thread__in=threads).count(),
        "checkpoints": Checkpoint.objects.filter(run__in=runs).count(),
        "run_snapshots": RunSnapshot.objects.filter(run__in=runs).count(),
        "observations": Observation.objects.filter(thread__in=threads).count(),
        "observation_progress": ObservationProgress.objects.filter(thread__in=threads).count(),
        "summaries": ThreadSummary.objects.filter(thread__in=threads).count(),
        "search_items": items.count(),
        "vectors": ItemEmbedding.objects.filter(item__in=items).count(),
        "extraction_runs": ExtractionRun.objects.filter(thread__in=threads).count(),
        "consolidation_progress": ConsolidationProgress.objects.filter(thread__in=threads).count(),
        "artifacts": Artifact.objects.filter(run__in=runs).count(),
        "action_events": ActionEvent.objects.filter(thread__in=threads).count(),
    }


@pytest.fixture
def world(alice, bob, use_embedder):
    """Alice and Bob both serve end user user-1 in acme; Alice serves user-2 as well."""
    use_embedder(alice)
    _live_conversation(alice, "user-1", compaction=True)
    _live_conversation(alice, "user-2")
    _live_conversation(bob, "user-1")
    return Resource.objects.get(project=alice.agent.project, external_id="user-1")


def test_it_deletes_everything_of_the_end_user_and_counts_each_kind(world, alice, bob):
    before = _rows_of(alice.agent, world)
    user_2 = Resource.objects.get(external_id="user-2")
    others = (_rows_of(alice.agent, user_2), _rows_of(bob.agent, world))
    made = {kind for kind, count in before.items() if count}
    # Compaction makes summaries, not observations; no endpoint means no extraction runs.
    assert made >= set(before) - {"observations", "observation_progress", "extraction_runs"}

    response = alice.delete("/api/v1/resources/user-1")

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["resource_id"] == "user-1"
    deleted = body["deleted"]
    assert {kind: deleted[kind] for kind in before} == before
    assert deleted["resources"] == 0  # Bob still serves user-1
    assert set(deleted) - set(before) <= {"resources", "observation_failures"}
    assert all(count == 0 for count in _rows_of(alice.agent, world).values())
    assert (_rows_of(alice.agent, user_2), _rows_of(bob.agent, world)) == others


def test_entries_taken_from_the_end_users_messages_go_with_them(world, alice):
    derived = MemoryEntry.objects.get(agent=alice.agent, content="Elm Street boilers leak")
    assert derived.resource is None and derived.message is not None

    alice.delete("/api/v1/resources/user-1")

    assert not MemoryEntry.objects.filter(pk=derived.pk).exists()
    assert not SearchItem.objects.filter(entry_id=derived.pk).exists()


def test_search_finds_nothing_of_the_forgotten_end_user(world, alice):
    alice.delete("/api/v1/resources/user-1")

    found = alice.post("/api/v1/search", {"query": "Elm Street boiler leaks"})

    assert found.status_code == 200
    assert found.json()["results"]  # user-2's conversation says the same
    remaining = {hit.get("thread_id") for hit in found.json()["results"]}
    user_2_threads = {
        str(pk)
        for pk in Thread.objects.filter(resource__external_id="user-2").values_list("pk", flat=True)
    }
    assert remaining - {None} <= user_2_threads


def test_the_last_agent_to_forget_an_end_user_deletes_their_id(world, alice, bob):
    alice.delete("/api/v1/resources/user-1")
    response = bob.delete("/api/v1/resources/user-1")

    assert response.json()["deleted"]["resources"] == 1
    assert not Resource.objects.filter(external_id="user-1").exists()
    assert alice.delete("/api/v1/resources/user-1").status_code == 404


def test_a_second_forget_is_404_as_nothing_is_left(world, alice):
    alice.delete("/api/v1/resources/user-1")

    again = alice.delete("/api/v1/resources/user-1")

    assert again.status_code == 404
    assert "keeps nothing" in again.json()["error"]["message"]


def test_an_agent_that_keeps_nothing_of_the_end_user_gets_404(world, alice):
    mallory = make_actor("acme", "mallory")
    before = _rows_of(alice.agent, world)

    assert mallory.delete("/api/v1/resources/user-1").status_code == 404
    assert _rows_of(alice.agent, world) == before


def test_an_unknown_end_user_is_404_naming_the_parameter(alice, carol, world):
    unknown = alice.delete("/api/v1/resources/nobody")
    elsewhere = carol.delete("/api/v1/resources/user-1")  # another project's end user

    assert unknown.status_code == 404
    assert "resource_id" in unknown.json()["error"]["message"]
    assert elsewhere.status_code == 404
    assert Thread.objects.filter(resource=world).count() == 2


def test_it_needs_an_api_key(anonymous, world):
    assert anonymous.delete("/api/v1/resources/user-1").status_code == 401


def test_it_is_audited_with_the_counts(world, alice):
    from apps.audit.models import AuditEvent

    deleted = alice.delete("/api/v1/resources/user-1").json()["deleted"]

    event = AuditEvent.objects.get(action="resource.forget")
    assert event.after == deleted
    assert event.actor == "agent:acme/alice"


def test_the_command_forgets_and_prints_the_counts(world, alice):
    before = _rows_of(alice.agent, world)
    out = StringIO()

    call_command("forget_resource", "acme", "alice", "user-1", stdout=out)

    printed = json.loads(out.getvalue())
    assert {kind: printed["deleted"][kind] for kind in before} == before
    assert Thread.objects.filter(agent=alice.agent, resource=world).count() == 0


@pytest.mark.parametrize(
    "args, message",
    [
        (("acme", "nobody", "user-1"), "No agent 'nobody'"),
        (("acme", "alice", "nobody"), "resource_id"),
    ],
)
def test_the_command_names_what_it_cannot_find(world, args, message):
    with pytest.raises(CommandError, match=message):
        call_command("forget_resource", *args, stdout=StringIO())
