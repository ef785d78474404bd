"""Concurrent appends through the real HTTP server: seq stays gap-free and duplicate-free."""

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from apps.threads.models import Message

CLIENTS = 20
APPENDS_PER_CLIENT = 250


def _session(key: str) -> requests.Session:
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {key}"
    return session


@pytest.mark.slow
def test_concurrent_appends_get_gap_free_seq_in_client_order(live_server, transactional_db):
    from tests.conftest import make_actor

    alice = make_actor("acme", "alice")
    thread = alice.new_thread(title="hammered")
    url = f"{live_server.url}/api/v1/threads/{thread['id']}/messages"
    start = threading.Barrier(CLIENTS)

    def client(number: int) -> list[int]:
        session = _session(alice.key)
        start.wait()
        seqs = []
        for i in range(APPENDS_PER_CLIENT):
            body = {"messages": [{"role": "user", "content": f"{number}:{i}"}]}
            response = session.post(url, json=body, timeout=60)
            assert response.status_code == 201, response.text
            seqs.append(response.json()["messages"][0]["seq"])
        return seqs

    with ThreadPoolExecutor(CLIENTS) as pool:
        answered = list(pool.map(client, range(CLIENTS)))

    stored = list(Message.objects.filter(thread_id=thread["id"]).values_list("seq", "content"))
    total = CLIENTS * APPENDS_PER_CLIENT
    assert sorted(seq for seq, _ in stored) == list(range(1, total + 1))
    for number, seqs in enumerate(answered):
        assert seqs == sorted(seqs), f"client {number} saw its messages reordered"
        mine = sorted((seq, content) for seq, content in stored if content.startswith(f"{number}:"))
        assert [content for _, content in mine] == [
            f"{number}:{i}" for i in range(APPENDS_PER_CLIENT)
        ]
    assert alice.get(f"/api/v1/threads/{thread['id']}").json()["last_seq"] == total


def test_one_idempotency_key_sent_concurrently_stores_one_message(live_server, transactional_db):
    from tests.conftest import make_actor

    alice = make_actor("acme", "alice")
    thread = alice.new_thread()
    url = f"{live_server.url}/api/v1/threads/{thread['id']}/messages"
    body = {"messages": [{"role": "user", "content": "charge card", "idempotency_key": "evt-9"}]}
    start = threading.Barrier(3)

    def send(_):
        session = _session(alice.key)
        start.wait()
        return session.post(url, json=body, timeout=60)

    with ThreadPoolExecutor(3) as pool:
        responses = list(pool.map(send, range(3)))

    assert sorted(r.status_code for r in responses) == [200, 200, 201]
    assert len({r.json()["messages"][0]["id"] for r in responses}) == 1
    assert Message.objects.filter(thread_id=thread["id"]).count() == 1
