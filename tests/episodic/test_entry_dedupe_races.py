"""Dedupe of entries proposed close together: the database holds the hash, fresh entries count.

The parallel proposals go through the real HTTP server. On PostgreSQL they overlap, each server
thread on its own connection; on SQLite the writers are serialised, and the answers must match.
"""

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from apps.episodic.models import MemoryEntry
from tests.conftest import make_actor

PROPOSALS = 4
ROUNDS = 3


@pytest.mark.parametrize("resource_id", [None, "cust-1"])
def test_parallel_proposals_of_one_content_store_one_entry(
    live_server, transactional_db, resource_id
):
    alice = make_actor("acme", "alice")
    sessions = [requests.Session() for _ in range(PROPOSALS)]
    for session in sessions:
        session.headers["Authorization"] = f"Bearer {alice.key}"

    for round_ in range(ROUNDS):  # a few rounds, so a race that is only likely shows every time
        body = {"content": f"The VPN drops every day at {round_ + 5}pm"}
        if resource_id:
            body["resource_id"] = resource_id
        start = threading.Barrier(PROPOSALS)

        def propose(session, body=body, start=start):
            start.wait()
            return session.post(f"{live_server.url}/api/v1/episodic", json=body, timeout=60)

        with ThreadPoolExecutor(PROPOSALS) as pool:
            responses = list(pool.map(propose, sessions))

        assert sorted(r.status_code for r in responses) == [200] * (PROPOSALS - 1) + [201], [
            r.text for r in responses
        ]
        answers = [r.json() for r in responses]
        assert len({answer["id"] for answer in answers}) == 1
        assert sorted(str(answer["duplicate_of"]) for answer in answers) == ["None"] + ["hash"] * (
            PROPOSALS - 1
        )
    assert MemoryEntry.objects.filter(agent=alice.agent).count() == ROUNDS


def test_a_near_duplicate_proposed_before_the_first_is_embedded_is_caught(alice, use_embedder):
    run_jobs = use_embedder(alice, dims=256)
    run_jobs()  # the project's vector index is ready; entries proposed from now wait for the job
    first = alice.post(
        "/api/v1/episodic",
        {"content": "The nightly backup job fails because the disk is full", "resource_id": "r"},
    )

    near = alice.post(
        "/api/v1/episodic",
        {"content": "The nightly backup job fails because the disk is full!", "resource_id": "r"},
    )
    different = alice.post(
        "/api/v1/episodic",
        {"content": "Password resets email the wrong address", "resource_id": "r"},
    )

    assert first.status_code == 201
    assert near.status_code == 200, near.content
    assert near.json()["id"] == first.json()["id"]
    assert near.json()["duplicate_of"] == "similarity"
    assert near.json()["similarity"] >= 0.86
    assert different.status_code == 201
    assert MemoryEntry.objects.filter(agent=alice.agent).count() == 2


def test_a_near_duplicate_of_an_entry_of_another_resource_is_stored(alice, use_embedder):
    run_jobs = use_embedder(alice, dims=256)
    run_jobs()
    text = "The nightly backup job fails because the disk is full"
    alice.post("/api/v1/episodic", {"content": text, "resource_id": "r"})

    elsewhere = alice.post("/api/v1/episodic", {"content": text + "!", "resource_id": "s"})
    loose = alice.post("/api/v1/episodic", {"content": text + "!"})

    assert elsewhere.status_code == 201, elsewhere.content
    assert loose.status_code == 201, loose.content


def test_a_rejected_entry_proposed_again_is_answered_by_hash_not_stored(alice):
    from apps.episodic.services import entry_set_status

    first = alice.post("/api/v1/episodic", {"content": "Exports skip archived rows"}).json()
    entry_set_status(
        entry=MemoryEntry.objects.get(pk=first["id"]), status="rejected", actor="operator:ops"
    )

    again = alice.post("/api/v1/episodic", {"content": "exports skip  archived rows"})

    assert again.status_code == 200
    assert (again.json()["id"], again.json()["status"]) == (first["id"], "rejected")
    assert again.json()["duplicate_of"] == "hash"
