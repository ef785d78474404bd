"""Web pages into knowledge bases, fetched from a real HTTP server on loopback."""

import html
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from apps.audit.models import AuditEvent
from apps.jobs.models import Job
from apps.jobs.services import job_run_pending
from apps.knowledge.models import Chunk, Document
from tests.loopback import serving
from tests.pdfs import make_pdf

GUIDE = b"""<!doctype html>
<html><head><title>Chiller maintenance guide</title></head>
<body>
<nav><a href="/">Home</a> <a href="/login">Sign in to the partner portal</a></nav>
<header><p>ACME Industrial newsletter: subscribe for monthly offers and deals</p></header>
<article>
<h1>Chiller maintenance</h1>
<p>Close the coolant valve before you open the chiller housing. The valve sits behind the
left panel and turns clockwise to close. Wait ten minutes for the pressure to drop.</p>
<h2>Filters</h2>
<p>Replace the intake filter every three months, or sooner when the pressure gauge reads above
two bar. Filters of type F-220 fit every chiller of the 2000 series.</p>
</article>
<footer><p>Copyright ACME Industrial. Cookie settings and privacy policy.</p></footer>
</body></html>"""


class _Site(BaseHTTPRequestHandler):
    def do_GET(self):
        path = self.path
        if path.startswith("/guide"):
            self._send(200, "text/html; charset=utf-8", GUIDE)
        elif path == "/notes.txt":
            self._send(200, "text/plain", b"Pump P-7 is serviced every spring by Delta Co.")
        elif path == "/big":
            self._send(200, "text/html", b"<p>" + b"x" * 50_000 + b"</p>")
        elif path == "/to-guide":
            self._redirect("/guide")
        elif path == "/to-metadata":
            self._redirect("http://169.254.169.254/latest/meta-data/")
        elif path == "/manual.pdf":
            self._send(200, "application/pdf", make_pdf(["Torque the flange bolts to 40 Nm."]))
        elif path == "/slow":
            time.sleep(1.5)
            self._send(200, "text/plain", b"too late")
        elif path == "/image.png":
            self._send(200, "image/png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 20)
        else:
            self._send(404, "text/plain", b"not here")

    def _send(self, status, content_type, body):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _redirect(self, location):
        self.send_response(302)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format, *args):
        pass


@pytest.fixture
def site():
    with serving(ThreadingHTTPServer(("127.0.0.1", 0), _Site)) as base_url:
        yield base_url


@pytest.fixture
def loopback_allowed(settings):
    settings.OUTBOUND_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    settings.KNOWLEDGE_URL_MAX_BYTES = 20_000


@pytest.fixture
def kb(alice):
    assert alice.post("/api/v1/knowledge-bases", {"slug": "manuals"}).status_code == 201
    return "/api/v1/knowledge-bases/manuals/documents"


def add(actor, kb, url, **fields):
    return actor.post(kb, {"url": url, **fields})


def document_after_ingest(actor, document_id) -> dict:
    job_run_pending()
    return actor.get(f"/api/v1/documents/{document_id}").json()


def test_a_page_becomes_a_ready_searchable_document_with_its_url_as_source(
    alice, kb, site, loopback_allowed
):
    answer = add(alice, kb, f"{site}/guide")
    assert answer.status_code == 202, answer.content

    document = document_after_ingest(alice, answer.json()["id"])

    assert document["status"] == "ready", document["error"]
    assert document["title"] == "Chiller maintenance guide"
    assert document["metadata"]["url"] == f"{site}/guide"
    assert Document.objects.get(pk=document["id"]).source.label == f"{site}/guide"
    assert Document.objects.get(pk=document["id"]).source.kind == "url"
    text = " ".join(
        Chunk.objects.filter(document_id=document["id"]).values_list("content", flat=True)
    )
    assert "Close the coolant valve" in text and "F-220" in text
    assert "partner portal" not in text and "Cookie settings" not in text  # main text only
    found = alice.post("/api/v1/search", {"query": "coolant valve", "scopes": ["knowledge"]})
    assert found.json()["results"][0]["metadata"]["document_id"] == document["id"]


def test_a_text_page_is_stored_as_text(alice, kb, site, loopback_allowed):
    answer = add(alice, kb, f"{site}/notes.txt", title="Pump notes")

    document = document_after_ingest(alice, answer.json()["id"])

    assert (document["status"], document["title"], document["mime_type"]) == (
        "ready",
        "Pump notes",
        "text/plain",
    )


def test_a_loopback_url_without_the_setting_is_refused_with_a_clear_400(alice, kb, site):
    answer = add(alice, kb, f"{site}/guide")

    assert answer.status_code == 400
    message = answer.json()["error"]["message"]
    assert message.startswith("url: 127.0.0.1 resolves to 127.0.0.1, a loopback address")
    assert "OUTBOUND_ALLOWED_NETWORKS" in message
    assert not Document.objects.exists()


def test_a_page_over_the_size_cap_fails_with_the_reason(alice, kb, site, loopback_allowed):
    answer = add(alice, kb, f"{site}/big")

    document = document_after_ingest(alice, answer.json()["id"])

    assert document["status"] == "failed"
    assert "the limit is 20000 bytes" in document["error"]
    assert document["chunk_count"] == 0


def test_a_pdf_page_is_read_like_an_uploaded_pdf(alice, kb, site, loopback_allowed):
    answer = add(alice, kb, f"{site}/manual.pdf")

    document = document_after_ingest(alice, answer.json()["id"])

    assert (document["status"], document["mime_type"]) == ("ready", "application/pdf")
    found = alice.post("/api/v1/search", {"query": "flange bolts", "scopes": ["knowledge"]})
    assert found.json()["results"][0]["metadata"]["document_id"] == document["id"]


def test_a_page_slower_than_the_timeout_is_tried_again_later(
    alice, kb, site, loopback_allowed, settings
):
    settings.KNOWLEDGE_URL_TIMEOUT = 0.3
    answer = add(alice, kb, f"{site}/slow")

    started = time.monotonic()
    document = document_after_ingest(alice, answer.json()["id"])

    assert time.monotonic() - started < 1.4  # the worker did not wait for the whole answer
    assert document["status"] == "processing"
    job = Job.objects.get(kind="knowledge.ingest")
    assert job.status == "pending" and "PageRetry" in job.error and f"{site}/slow" in job.error


def test_a_redirect_to_a_private_address_is_refused(alice, kb, site, loopback_allowed):
    answer = add(alice, kb, f"{site}/to-metadata")

    document = document_after_ingest(alice, answer.json()["id"])

    assert document["status"] == "failed"
    assert document["error"].startswith(f"Refused to fetch {site}/to-metadata:")
    assert "169.254.169.254, a link-local address" in document["error"]


def test_a_redirect_to_an_allowed_page_is_followed(alice, kb, site, loopback_allowed):
    answer = add(alice, kb, f"{site}/to-guide")

    document = document_after_ingest(alice, answer.json()["id"])

    assert document["status"] == "ready"
    assert document["metadata"]["fetched_url"] == f"{site}/guide"


def test_the_same_address_twice_answers_the_stored_document(alice, kb, site, loopback_allowed):
    first = add(alice, kb, f"{site}/guide")
    job_run_pending()

    again = add(alice, kb, f"{site}/guide")

    assert again.status_code == 200
    assert again.json()["duplicate"] is True and again.json()["id"] == first.json()["id"]


def test_the_same_content_at_another_address_is_not_stored_twice(alice, kb, site, loopback_allowed):
    first = add(alice, kb, f"{site}/guide").json()
    job_run_pending()

    copy = add(alice, kb, f"{site}/guide?print=1")
    document = document_after_ingest(alice, copy.json()["id"])

    assert document["status"] == "failed"
    assert f"already in this knowledge base as document {first['id']}" in document["error"]
    assert Chunk.objects.filter(document_id=document["id"]).count() == 0


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("/missing", "answered HTTP 404"),
        ("/image.png", "The page is image/png; web pages are read when they are HTML"),
    ],
)
def test_a_page_that_cannot_be_read_fails_with_the_reason(
    alice, kb, site, loopback_allowed, path, reason
):
    answer = add(alice, kb, f"{site}{path}")

    document = document_after_ingest(alice, answer.json()["id"])

    assert document["status"] == "failed" and reason in document["error"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"url": "ftp://example.com/file"}, "url: only http and https addresses are fetched"),
        ({"url": "http:///nohost"}, "names no host"),
        ({"url": "http://user:secret@example.com/"}, "must not carry a user name or password"),
        ({"url": ""}, "url"),
        ({"url": "https://example.com/", "extra": 1}, "extra"),
    ],
)
def test_bad_addresses_get_a_400_naming_the_field(alice, kb, body, message):
    answer = alice.post(kb, body)

    assert answer.status_code == 400
    assert message in str(answer.json()["error"])


def test_other_projects_cannot_add_pages_to_a_knowledge_base(carol, kb, site, loopback_allowed):
    answer = add(carol, kb, f"{site}/guide")

    assert answer.status_code == 404


def test_the_console_upload_form_takes_web_page_addresses(alice, kb, site, loopback_allowed):
    user = User.objects.create_user(username="curator", password="pw")
    user.groups.set(Group.objects.filter(name="curator"))
    client = Client()
    client.force_login(user)
    kb_id = alice.get("/api/v1/knowledge-bases").json()["results"][0]["id"]

    page = client.get(f"/console/knowledge/{kb_id}/")
    assert 'name="urls"' in page.content.decode()
    answer = client.post(
        f"/console/knowledge/{kb_id}/upload/",
        {"urls": f"{site}/guide\r\n  {site}/notes.txt  \n\nftp://nope\nnot a url"},
        follow=True,
    )

    body = html.unescape(answer.content.decode())
    assert "Added 2 web pages; fetching now." in body
    assert "ftp://nope was refused: Only http and https addresses are fetched" in body
    # One address per line: a line with spaces is one address refused, not three.
    assert "not a url was refused" in body and "not was refused" not in body
    job_run_pending()
    assert sorted(Document.objects.values_list("status", flat=True)) == ["ready", "ready"]


def test_adding_a_page_is_audited_with_its_address(alice, kb, site, loopback_allowed):
    answer = add(alice, kb, f"{site}/guide")
    assert answer.status_code == 202, answer.content

    record = AuditEvent.objects.get(action="document.create", object_id=answer.json()["id"])

    assert record.actor == "agent:acme/alice"
    assert record.after["source"] == "url" and record.after["url"] == f"{site}/guide"
