"""An upload over the size limit, streamed to a real server: refused unread, in flat memory."""

import threading
import tracemalloc

import pytest
import requests
from django.core.servers import basehttp
from django.test import override_settings

from apps.knowledge.models import Document
from tests.conftest import make_actor

MB = 2**20
LIMIT = 1 * MB
BODY = 64 * MB
BOUNDARY = "----limit-test"


class StreamedUpload:
    """A multipart body of `size` bytes, made piece by piece as it is sent, never held whole.

    Its length is known, so requests sends a Content-Length rather than chunked encoding,
    which Django does not read.
    """

    def __init__(self, size: int, piece: int = 64 * 1024):
        self.head = (
            f"--{BOUNDARY}\r\n"
            'Content-Disposition: form-data; name="file"; filename="huge.md"\r\n'
            "Content-Type: text/markdown\r\n\r\n"
        ).encode()
        self.tail = f"\r\n--{BOUNDARY}--\r\n".encode()
        self.size, self.piece, self.sent = size, piece, 0

    def __len__(self):
        return self.size

    def __iter__(self):
        yield self.head
        self.sent = len(self.head)
        filler = b"x" * self.piece
        while self.sent < self.size - len(self.tail):
            part = filler[: self.size - len(self.tail) - self.sent]
            self.sent += len(part)
            yield part
        self.sent += len(self.tail)
        yield self.tail


@pytest.fixture
def server_reads(monkeypatch):
    """Record, per request, the status and how much of the body the application had read.

    After answering, Django's test server drains an unread body with a single read() of all
    of it (basehttp.ServerHandler.close), which would hold the whole body in memory at once.
    gunicorn, which serves the application, discards it in small reads instead; so does this
    fixture, so the measured memory is the application's.
    """
    records: list[dict] = []
    lock = threading.Lock()

    def close(handler):
        stream = handler.get_stdin()
        with lock:
            records.append({"status": handler.status, "read_by_app": stream._pos})
        while stream.read(64 * 1024):
            pass
        super(basehttp.ServerHandler, handler).close()

    monkeypatch.setattr(basehttp.ServerHandler, "close", close)
    return records


@override_settings(KNOWLEDGE_MAX_UPLOAD_BYTES=LIMIT)
def test_an_upload_far_over_the_limit_is_refused_unread_in_flat_memory(
    live_server, transactional_db, server_reads
):
    alice = make_actor("acme", "alice")
    alice.post("/api/v1/knowledge-bases", {"slug": "ops"})
    body = StreamedUpload(BODY)

    tracemalloc.start()
    try:
        response = requests.post(
            f"{live_server.url}/api/v1/knowledge-bases/ops/documents",
            data=body,
            headers={
                "Authorization": f"Bearer {alice.key}",
                "Content-Type": f"multipart/form-data; boundary={BOUNDARY}",
            },
            timeout=120,
        )
    except requests.ConnectionError as exc:
        # A server may close the connection after its 413 instead of reading the rest; the
        # client can then lose the answer to the reset. Say what the server did.
        pytest.fail(f"connection lost after the server answered {server_reads}: {exc}")
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()

    assert response.status_code == 413, response.content
    assert response.json()["error"]["code"] == "payload_too_large"
    assert response.json()["error"]["details"] == {"limit_bytes": LIMIT}
    assert "Split the file" in response.json()["error"]["message"]
    [served] = server_reads
    assert served["status"].startswith("413")
    assert served["read_by_app"] == 0  # refused from its Content-Length, before any of the body
    assert body.sent == BODY  # the whole body did go over the wire
    assert peak < 8 * MB, f"traced peak {peak / MB:.1f} MB for a {BODY // MB} MB body"
    assert Document.objects.count() == 0
