"""Concurrent resolve-or-create of one (channel, external_id) thread through the real server."""

import threading
from concurrent.futures import ThreadPoolExecutor

import requests

from apps.tenancy.models import Resource
from apps.threads.models import Thread
from tests.conftest import make_actor

CLIENTS = 6


def test_concurrent_resolves_of_one_chat_create_one_thread(live_server, transactional_db):
    alice = make_actor("acme", "alice")
    body = {"channel": "telegram", "external_id": "chat-42", "resource_id": "cust-9"}
    start = threading.Barrier(CLIENTS)

    def resolve(_):
        session = requests.Session()
        session.headers["Authorization"] = f"Bearer {alice.key}"
        start.wait()
        return session.post(f"{live_server.url}/api/v1/threads", json=body, timeout=60)

    with ThreadPoolExecutor(CLIENTS) as pool:
        responses = list(pool.map(resolve, range(CLIENTS)))

    statuses = sorted(r.status_code for r in responses)
    assert statuses == [200] * (CLIENTS - 1) + [201], [r.text for r in responses]
    assert len({r.json()["id"] for r in responses}) == 1
    assert Thread.objects.filter(agent=alice.agent, external_id="chat-42").count() == 1
    assert Resource.objects.filter(external_id="cust-9").count() == 1
