"""A server that drips its answer cannot hold a URL fetch past its deadline.

A socket timeout bounds each read, not the fetch: a page sending one byte every 2 s held each
attempt with a 5 s KNOWLEDGE_URL_TIMEOUT for about 150 s, and the worker with it. The server
here is real (a TCP server on loopback) and drips one byte every DRIP seconds in the headers,
in the body, or in a body without a length; the deadline is short to keep the tests fast.
"""

import socketserver
import time

import pytest

from apps.core.outbound import OutboundError, fetch, post
from apps.jobs.models import Job
from apps.jobs.services import job_run_pending
from tests.loopback import serving

DRIP = 0.1  # seconds between two bytes: far below the deadline, so each read succeeds
DEADLINE = 1.0  # the fetch's whole timeout
# Long enough that a fetch bounded per read only takes several seconds (a failure, not a hang).
HEADER = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n"
BODY = b"a page that arrives one byte at a time"


def _drip(wfile, data: bytes) -> None:
    for index in range(len(data)):
        wfile.write(data[index : index + 1])
        wfile.flush()
        time.sleep(DRIP)


class _Dripping(socketserver.StreamRequestHandler):
    def handle(self):
        request_line = self.rfile.readline().decode()
        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
            pass
        path = request_line.split()[1]
        try:
            if path == "/headers":
                _drip(self.wfile, HEADER + BODY)
            elif path == "/body":
                self.wfile.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                    + f"Content-Length: {len(BODY)}\r\n\r\n".encode()
                )
                _drip(self.wfile, BODY)
            elif path == "/body-until-close":  # no length: the body ends where the server stops
                self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n")
                _drip(self.wfile, BODY)
            else:
                self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        except OSError:
            pass  # the client hung up: what the deadline is for


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


@pytest.fixture
def dripping():
    with serving(_Server(("127.0.0.1", 0), _Dripping)) as base_url:
        yield base_url


@pytest.fixture
def loopback_allowed(settings):
    settings.OUTBOUND_ALLOWED_NETWORKS = ["127.0.0.1/32"]


@pytest.mark.parametrize("path", ["/headers", "/body", "/body-until-close"])
def test_a_fetch_ends_at_its_deadline_however_slowly_the_server_drips(
    dripping, loopback_allowed, path
):
    started = time.monotonic()
    with pytest.raises(OutboundError) as failed:
        fetch(f"{dripping}{path}", max_bytes=10_000, timeout=DEADLINE)
    took = time.monotonic() - started

    assert took < DEADLINE + 1.0, f"the fetch took {took:.1f} s"
    assert failed.value.retryable
    assert f"did not answer in full within {DEADLINE:g} s" in str(failed.value)


def test_a_webhook_post_ends_at_its_deadline_too(dripping, loopback_allowed):
    started = time.monotonic()
    with pytest.raises(OutboundError, match="did not answer in full"):
        post(f"{dripping}/headers", body=b"{}", headers={}, timeout=DEADLINE)

    assert time.monotonic() - started < DEADLINE + 1.0


def test_a_prompt_server_is_fetched_as_before(dripping, loopback_allowed):
    page = fetch(f"{dripping}/quick", max_bytes=100, timeout=DEADLINE)

    assert page.body == b"ok"


def test_the_ingestion_job_is_freed_at_the_deadline_and_tried_again(
    alice, dripping, loopback_allowed, settings
):
    settings.KNOWLEDGE_URL_TIMEOUT = DEADLINE
    assert alice.post("/api/v1/knowledge-bases", {"slug": "manuals"}).status_code == 201
    answer = alice.post("/api/v1/knowledge-bases/manuals/documents", {"url": f"{dripping}/headers"})
    assert answer.status_code == 202, answer.content

    started = time.monotonic()
    job_run_pending()
    took = time.monotonic() - started

    assert took < DEADLINE + 2.0, f"the worker was held {took:.1f} s"
    job = Job.objects.get(kind="knowledge.ingest")
    assert job.status == "pending" and "PageRetry" in job.error
    assert "did not answer in full" in job.error
