"""POST /api/v1/runs: one call resolves or creates the thread by chat id and starts a run."""

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from apps.threads.models import Run, Thread
from tests.conftest import make_actor

CLIENTS = 6


def test_two_calls_with_one_chat_id_give_one_thread_and_two_runs(alice):
    body = {"channel": "telegram", "external_id": "42", "resource_id": "ann", "name": "turn"}

    first = alice.post("/api/v1/runs", body)
    second = alice.post("/api/v1/runs", {**body, "metadata": {"n": 2}})

    assert first.status_code == second.status_code == 201
    assert first.json()["thread_created"] is True and second.json()["thread_created"] is False
    assert first.json()["thread_id"] == second.json()["thread_id"]
    assert first.json()["id"] != second.json()["id"]
    assert second.json()["status"] == "running" and second.json()["metadata"] == {"n": 2}
    thread = Thread.objects.get()
    assert (thread.channel, thread.external_id, thread.resource.external_id) == (
        "telegram",
        "42",
        "ann",
    )
    assert Run.objects.filter(thread=thread).count() == 2


def test_a_chat_id_of_another_end_user_starts_no_run_and_is_a_409(alice):
    body = {"channel": "telegram", "external_id": "42", "resource_id": "ann"}
    first = alice.post("/api/v1/runs", body).json()

    response = alice.post("/api/v1/runs", {**body, "resource_id": "bob"})

    assert response.status_code == 409
    assert response.json()["error"]["message"].startswith("resource_id: ")
    assert response.json()["error"]["details"]["thread_id"] == first["thread_id"]
    assert Run.objects.count() == 1


def test_another_agents_chat_id_is_a_thread_of_its_own(alice, bob):
    body = {"channel": "telegram", "external_id": "42"}

    mine = alice.post("/api/v1/runs", body).json()
    theirs = bob.post("/api/v1/runs", body).json()

    assert mine["thread_id"] != theirs["thread_id"]
    assert bob.get(f"/api/v1/runs/{mine['id']}").status_code == 404


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "external_id"),
        ({"external_id": ""}, "external_id"),
        ({"external_id": "1", "colour": "red"}, "colour"),
        ({"external_id": "1", "metadata": []}, "metadata"),
        ({"external_id": "1", "channel": "x" * 65}, "channel"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(alice, body, field):
    response = alice.post("/api/v1/runs", body)

    assert response.status_code == 400
    assert response.json()["error"]["message"].startswith(f"{field}: ")
    assert Thread.objects.count() == 0


def test_concurrent_calls_share_one_thread(live_server, transactional_db):
    alice = make_actor("acme", "alice")
    start = threading.Barrier(CLIENTS)

    def send(n):
        session = requests.Session()
        session.headers["Authorization"] = f"Bearer {alice.key}"
        start.wait()
        body = {"channel": "slack", "external_id": "C1", "name": f"run {n}"}
        return session.post(f"{live_server.url}/api/v1/runs", json=body, timeout=60)

    with ThreadPoolExecutor(CLIENTS) as pool:
        responses = list(pool.map(send, range(CLIENTS)))

    assert [r.status_code for r in responses] == [201] * CLIENTS, [r.text for r in responses]
    assert len({r.json()["thread_id"] for r in responses}) == 1
    assert sum(r.json()["thread_created"] for r in responses) == 1
    assert Thread.objects.count() == 1 and Run.objects.count() == CLIENTS
