"""Knowledge updates: a newer entry supersedes an older one; the chain stays; recall `as_of`."""

import time

from django.utils import timezone

from apps.audit.models import AuditEvent
from apps.episodic.models import MemoryEntry
from apps.jobs.services import job_run_pending
from tests.episodic.conftest import configure, entries_answer


def _propose(actor, content, resource_id="cust-1", **extra) -> dict:
    response = actor.post(
        "/api/v1/episodic", {"content": content, "resource_id": resource_id, **extra}
    )
    assert response.status_code == 201, response.content
    return response.json()


def _approve(moderator, entry_id) -> None:
    response = moderator.post(f"/console/moderation/{entry_id}/approve/")
    assert response.status_code == 302, response.content


def _recall(actor, query="ships address", **extra) -> list[str]:
    response = actor.post(
        "/api/v1/episodic/recall", {"query": query, "resource_id": "cust-1", **extra}
    )
    assert response.status_code == 200, response.content
    return [result["content"] for result in response.json()["results"]]


def _moment():
    """A time strictly between what came before and what comes after."""
    time.sleep(0.01)
    now = timezone.now()
    time.sleep(0.01)
    return now


def test_approving_a_successor_supersedes_the_older_entry_and_keeps_the_chain(alice, as_role):
    moderator = as_role("moderator")
    old = _propose(alice, "Ships to the address 1 Old Street")
    _approve(moderator, old["id"])
    new = _propose(alice, "Ships to the address 9 New Road", supersedes=old["id"])

    assert new["supersedes"] == old["id"] and new["status"] == "pending"
    assert _recall(alice) == ["Ships to the address 1 Old Street"]  # until it is approved

    _approve(moderator, new["id"])

    older = alice.get(f"/api/v1/episodic/{old['id']}").json()
    assert older["status"] == "superseded" and older["superseded_by"] == new["id"]
    assert older["valid_to"] is not None
    assert _recall(alice) == ["Ships to the address 9 New Road"]
    assert AuditEvent.objects.filter(action="entry.supersede", object_id=old["id"]).exists()


def test_recall_as_of_answers_what_was_current_then(alice, as_role):
    moderator = as_role("moderator")
    before_any = _moment()
    old = _propose(alice, "Ships to the address 1 Old Street")
    _approve(moderator, old["id"])
    while_old = _moment()
    new = _propose(alice, "Ships to the address 9 New Road", supersedes=old["id"])
    _approve(moderator, new["id"])

    assert _recall(alice, as_of=before_any.isoformat()) == []
    assert _recall(alice, as_of=while_old.isoformat()) == ["Ships to the address 1 Old Street"]
    assert _recall(alice, as_of=timezone.now().isoformat()) == ["Ships to the address 9 New Road"]


def test_as_of_finds_enough_entries_behind_many_newer_ones(alice):
    configure(alice, episodic_approval_required=False)
    old = [_propose(alice, f"Ships parcel {n} to the old address") for n in range(3)]
    then = _moment()
    latest = [entry["id"] for entry in old]
    for n in range(30):  # three chains of successors, each superseding the one before
        newer = _propose(alice, f"Ships parcel {n} to the new address", supersedes=latest[n % 3])
        latest[n % 3] = newer["id"]

    found = _recall(alice, query="ships parcel address", as_of=then.isoformat(), top_k=3)

    assert sorted(found) == sorted(entry["content"] for entry in old)


def test_a_rejected_entry_stops_being_current_when_rejected(alice, as_role):
    moderator = as_role("moderator")
    entry = _propose(alice, "Ships to the address 1 Old Street")
    _approve(moderator, entry["id"])
    approved = _moment()
    moderator.post(f"/console/moderation/{entry['id']}/reject/")

    assert _recall(alice) == []
    assert _recall(alice, as_of=approved.isoformat()) == ["Ships to the address 1 Old Street"]


def test_a_bad_as_of_is_a_400_naming_it(alice):
    response = alice.post("/api/v1/episodic/recall", {"query": "x", "as_of": "last tuesday"})

    assert response.status_code == 400
    assert "as_of" in response.json()["error"]["details"]


def test_supersedes_must_name_a_live_entry_of_the_same_agent_and_resource(alice, bob):
    mine = _propose(alice, "Ships to the address 1 Old Street")
    other_resource = _propose(alice, "Ships to the address 2 Side Street", resource_id="cust-2")
    bobs = _propose(bob, "Ships to the address 3 Far Lane")

    cases = {
        bobs["id"]: "is not an entry of this agent",
        other_resource["id"]: "belongs to another resource",
    }
    for entry_id, message in cases.items():
        response = alice.post(
            "/api/v1/episodic",
            {"content": "Ships elsewhere", "resource_id": "cust-1", "supersedes": entry_id},
        )
        assert response.status_code == 422, response.content
        assert message in response.json()["error"]["message"]
    assert MemoryEntry.objects.get(pk=mine["id"]).status == "pending"


def test_the_extractor_names_the_entry_its_entry_updates(alice, llm, as_role):
    configure(alice, episodic_approval_required=False)
    old = _propose(alice, "Ships to the address 1 Old Street")
    thread = alice.new_thread(resource_id="cust-1")
    llm.script(
        entries_answer(
            {
                "content": "Ships to the address 9 New Road since the move.",
                "source": "user_assertion",
                "evidence": "we moved to 9 New Road",
                "supersedes": old["id"],
            }
        )
    )
    alice.append(
        thread["id"],
        {"role": "user", "content": "Please note we moved to 9 New Road last week."},
        {"role": "assistant", "content": "Thanks, updated."},
    )

    job_run_pending()

    older = MemoryEntry.objects.get(pk=old["id"])
    newer = MemoryEntry.objects.get(supersedes=older)
    assert older.status == "superseded" and older.superseded_by == newer
    assert _recall(alice) == ["Ships to the address 9 New Road since the move."]


def test_an_extractor_claim_on_another_agents_entry_is_ignored(alice, bob, llm):
    bobs = _propose(bob, "Ships to the address 3 Far Lane")
    configure(alice, episodic_approval_required=False)
    thread = alice.new_thread(resource_id="cust-1")
    llm.script(
        entries_answer(
            {
                "content": "Ships to 9 New Road.",
                "source": "user_assertion",
                "evidence": "9 New Road",
                "supersedes": bobs["id"],
            }
        )
    )
    alice.append(
        thread["id"],
        {"role": "user", "content": "Ship to 9 New Road."},
        {"role": "assistant", "content": "Will do."},
    )

    job_run_pending()

    assert MemoryEntry.objects.get(pk=bobs["id"]).status == "pending"
    assert MemoryEntry.objects.get(content="Ships to 9 New Road.").supersedes is None


def test_as_of_recall_stays_within_the_agent_and_resource(alice, bob, carol):
    configure(alice, episodic_approval_required=False)
    _propose(alice, "Ships to the address 1 Old Street")
    _propose(alice, "Ships to the address 2 Side Street", resource_id="cust-2")
    now = timezone.now().isoformat()

    assert _recall(alice, as_of=now) == ["Ships to the address 1 Old Street"]
    assert _recall(bob, as_of=now) == []
    response = carol.post(
        "/api/v1/episodic/recall", {"query": "ships", "resource_id": "cust-1", "as_of": now}
    )
    assert response.status_code == 404  # no such resource in carol's project
