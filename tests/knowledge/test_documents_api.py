import time

import pytest
from django.core.files.storage import default_storage
from django.test import override_settings

from apps.jobs.services import job_run_pending
from apps.knowledge.models import Chunk, Document
from apps.search.models import ItemEmbedding, SearchItem
from tests.pdfs import encrypt_pdf, make_pdf, page_text

MARKDOWN = b"""# Runbook

Intro paragraph about the service.

## Restarts

Restart the ingest worker with systemctl restart ingest. Wait for the health check.

## Backups

Backups run nightly at 02:00 and are kept for 30 days.
"""


@pytest.fixture
def kb(alice):
    response = alice.post("/api/v1/knowledge-bases", {"slug": "ops", "name": "Operations"})
    assert response.status_code == 201
    return "/api/v1/knowledge-bases/ops/documents"


def _knowledge(actor, query, **body):
    response = actor.post("/api/v1/search", {"query": query, "scopes": ["knowledge"], **body})
    assert response.status_code == 200, response.content
    return response.json()["results"]


def test_it_creates_and_lists_knowledge_bases(alice, bob, carol, kb):
    duplicate = alice.post("/api/v1/knowledge-bases", {"slug": "ops"})
    bad = alice.post("/api/v1/knowledge-bases", {"slug": "Not A Slug"})

    assert duplicate.status_code == 409
    assert bad.status_code == 400
    assert [k["slug"] for k in bob.get("/api/v1/knowledge-bases").json()["results"]] == ["ops"]
    assert carol.get("/api/v1/knowledge-bases").json()["results"] == []


def test_a_markdown_upload_is_chunked_by_heading_in_the_background(alice, kb):
    response = alice.upload(kb, "runbook.md", MARKDOWN)

    assert response.status_code == 202
    document = response.json()
    assert (document["status"], document["mime_type"], document["duplicate"]) == (
        "pending",
        "text/markdown",
        False,
    )
    assert _knowledge(alice, "restart ingest worker") == []  # not ready: not searchable
    job_run_pending()
    ready = alice.get(f"/api/v1/documents/{document['id']}").json()
    assert (ready["status"], ready["progress"], ready["chunk_count"]) == ("ready", 100, 3)
    chunks = alice.get(f"/api/v1/documents/{document['id']}/chunks").json()["results"]
    assert [c["metadata"].get("heading") for c in chunks] == [
        "Runbook",
        "Runbook > Restarts",
        "Runbook > Backups",
    ]
    [hit, *_] = _knowledge(alice, "restart ingest worker", knowledge_base="ops")
    assert hit["type"] == "knowledge"
    assert "systemctl restart ingest" in hit["content"]
    assert hit["metadata"]["heading"] == "Runbook > Restarts"


def test_a_pdf_keeps_page_numbers(alice, kb):
    pdf = make_pdf(["Cover page", "The coolant valve must be checked weekly.", "Index"])
    document = alice.upload(kb, "manual.pdf", pdf).json()

    job_run_pending()

    chunks = alice.get(f"/api/v1/documents/{document['id']}/chunks").json()["results"]
    assert [c["metadata"]["page"] for c in chunks] == [1, 2, 3]
    [hit] = _knowledge(alice, "coolant valve checked")
    assert hit["metadata"]["page"] == 2


def test_html_is_indexed_without_scripts_and_styles(alice, kb):
    html = b"""<!doctype html><html><head><title>T</title><style>.secretstyle{}</style></head>
    <body><h1>Pricing</h1><p>The basic plan costs 10 euros.</p>
    <script>var trackingpixel = 1;</script></body></html>"""
    document = alice.upload(kb, "pricing.html", html).json()

    job_run_pending()

    [chunk] = alice.get(f"/api/v1/documents/{document['id']}/chunks").json()["results"]
    assert chunk["content"] == "The basic plan costs 10 euros."
    assert chunk["metadata"]["heading"] == "Pricing"
    assert _knowledge(alice, "trackingpixel secretstyle") == []


def test_text_can_be_sent_as_json(alice, kb):
    response = alice.post(kb, {"title": "Note", "text": "Parking is behind building C."})

    assert response.status_code == 202
    job_run_pending()
    assert _knowledge(alice, "parking building")[0]["content"] == "Parking is behind building C."


def test_an_identical_upload_is_reported_as_a_duplicate(alice, kb):
    first = alice.upload(kb, "a.md", MARKDOWN).json()
    again = alice.upload(kb, "copy-of-a.md", MARKDOWN)

    assert again.status_code == 200
    assert again.json()["id"] == first["id"]
    assert again.json()["duplicate"] is True
    assert Document.objects.count() == 1


def test_reindex_hides_chunks_until_the_document_is_ready_again(alice, kb):
    document = alice.upload(kb, "runbook.md", MARKDOWN).json()
    job_run_pending()

    response = alice.post(f"/api/v1/documents/{document['id']}/reindex")

    assert response.status_code == 202
    assert response.json()["status"] == "pending"
    assert response.json()["updated_at"] > document["updated_at"]
    assert _knowledge(alice, "restart ingest worker") == []
    job_run_pending()
    assert len(_knowledge(alice, "restart ingest worker")) >= 1
    assert Chunk.objects.count() == 3


def test_delete_removes_the_file_chunks_and_vectors(
    alice, kb, use_embedder, django_capture_on_commit_callbacks
):
    run_jobs = use_embedder(alice)
    document = alice.upload(kb, "runbook.md", MARKDOWN).json()
    run_jobs()
    run_jobs()
    stored = Document.objects.get(pk=document["id"]).file.name
    assert default_storage.exists(stored)
    assert ItemEmbedding.objects.filter(kind="chunk").count() == 3

    with django_capture_on_commit_callbacks(execute=True):
        response = alice.delete(f"/api/v1/documents/{document['id']}")

    assert response.status_code == 204
    assert not default_storage.exists(stored)
    assert Chunk.objects.count() == SearchItem.objects.count() == ItemEmbedding.objects.count() == 0
    assert alice.get(f"/api/v1/documents/{document['id']}").status_code == 404


def test_the_same_ingestion_delivered_again_has_its_effect_once(alice, kb):
    from apps.knowledge.ingestion import document_ingest

    document = alice.upload(kb, "runbook.md", MARKDOWN).json()
    document_ingest(document_id=document["id"])
    document_ingest(document_id=document["id"])  # a redelivery after success: nothing to do
    Document.objects.filter(pk=document["id"]).update(status="processing")
    document_ingest(document_id=document["id"])  # a redelivery while marked in progress

    indexes = list(Chunk.objects.values_list("chunk_index", flat=True))
    assert sorted(indexes) == [0, 1, 2]
    assert SearchItem.objects.filter(kind="chunk").count() == 3


@pytest.mark.parametrize(
    "name, content, status, says",
    [
        ("tool.pdf", b"MZ\x90\x00\x03" + b"\x00" * 200, 415, "Windows executable"),
        ("notes.pdf", b"just some text", 415, "not a PDF"),
        ("photo.png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 50, 415, "PNG image"),
        ("blob.bin", b"\x00\x01\x02\x03" * 50, 415, "binary"),
        ("empty.md", b"", 400, "empty"),
    ],
)
def test_it_refuses_files_it_cannot_index(alice, kb, name, content, status, says):
    response = alice.upload(kb, name, content)

    assert response.status_code == status
    assert says in response.json()["error"]["message"]
    assert Document.objects.count() == 0


@pytest.mark.parametrize(
    ("disposition", "message"),
    [
        # Django replaced each bad byte with U+FFFD: the title was stored as two of them.
        (
            b'name="file"; filename="notes.md"\r\n\r\n# hi\r\n--XyZ\r\n'
            b'Content-Disposition: form-data; name="title"\r\n\r\n\xff\xfe',
            "title: Not valid UTF-8: send the text encoded as UTF-8.",
        ),
        (b'name="file"; filename="\xff\xfe.md"\r\n\r\n# hi', "file: No file was submitted."),
    ],
)
def test_a_field_or_file_name_that_is_not_utf8_is_refused_naming_it(
    alice, kb, disposition, message
):
    body = b"--XyZ\r\nContent-Disposition: form-data; " + disposition + b"\r\n--XyZ--\r\n"

    response = alice.client.generic(
        "POST", kb, body, content_type="multipart/form-data; boundary=XyZ"
    )

    assert response.status_code == 400, response.content
    assert response.json()["error"]["message"] == message
    assert Document.objects.count() == 0


def test_a_file_name_with_folders_is_refused(alice, kb):
    # Django's test client strips folders from names itself, so the body is written by hand.
    body = (
        b"--XyZ\r\n"
        b'Content-Disposition: form-data; name="file"; filename="../../etc/passwd.md"\r\n'
        b"Content-Type: text/markdown\r\n\r\n# hi\r\n--XyZ--\r\n"
    )

    response = alice.client.generic(
        "POST", kb, body, content_type="multipart/form-data; boundary=XyZ"
    )

    assert response.status_code == 400
    assert "has folders in it" in response.json()["error"]["message"]
    assert Document.objects.count() == 0


@override_settings(KNOWLEDGE_MAX_UPLOAD_BYTES=1000)
def test_an_upload_over_the_limit_is_refused_with_413(alice, kb):
    response = alice.upload(kb, "big.md", b"x" * 5000)

    assert response.status_code == 413
    assert Document.objects.count() == 0


@pytest.mark.parametrize(
    "pdf, reason",
    [
        (encrypt_pdf(make_pdf(["locked"])), "encrypted"),
        (make_pdf([page_text(1), page_text(2)])[:1500], "damaged"),
        (make_pdf(["boom"], bomb_bytes=200_000_000), "expands beyond the allowed size"),
        (make_pdf(["", ""]), "No text was found"),
    ],
    ids=["encrypted", "corrupt", "decompression-bomb", "no-text"],
)
def test_unreadable_pdfs_fail_with_a_readable_reason(alice, kb, pdf, reason):
    document = alice.upload(kb, "doc.pdf", pdf).json()
    started = time.monotonic()

    job_run_pending()

    failed = alice.get(f"/api/v1/documents/{document['id']}").json()
    assert failed["status"] == "failed"
    assert reason in failed["error"]
    assert failed["chunk_count"] == 0
    assert Chunk.objects.count() == 0
    assert time.monotonic() - started < 30


@override_settings(KNOWLEDGE_EXTRACT_MEMORY_MB=120)
def test_a_pdf_reader_over_its_memory_limit_fails_cleanly(alice, kb):
    pdf = make_pdf(["boom"], bomb_bytes=60_000_000)  # under pypdf's own stream limit
    document = alice.upload(kb, "doc.pdf", pdf).json()

    job_run_pending()

    failed = alice.get(f"/api/v1/documents/{document['id']}").json()
    assert failed["status"] == "failed"
    assert "memory" in failed["error"]


@pytest.mark.parametrize(
    "body, field",
    [
        ({"title": "x"}, "text"),
        ({"title": "x", "text": "   "}, "text"),
        ({"text": "x"}, "title"),
        ({"title": "x", "text": "y", "tags": []}, "tags"),
    ],
)
def test_it_rejects_bad_text_documents(alice, kb, body, field):
    response = alice.post(kb, body)

    assert response.status_code == 400
    assert response.json()["error"]["message"].startswith(field)


def test_an_unknown_knowledge_base_or_another_projects_document_is_a_404(alice, carol, kb):
    document = alice.upload(kb, "runbook.md", MARKDOWN).json()

    assert alice.upload("/api/v1/knowledge-bases/nope/documents", "a.md", b"# a").status_code == 404
    assert carol.get(f"/api/v1/documents/{document['id']}").status_code == 404
    assert carol.delete(f"/api/v1/documents/{document['id']}").status_code == 404
    assert Document.objects.filter(pk=document["id"]).exists()


@pytest.mark.parametrize(
    "name, says",
    [
        (b"report\x00.md", "control character U+0000"),
        (b"report\x1b[31m.md", "control character U+001B"),
        ("r\u202eport.md".encode(), "bidirectional control character U+202E"),
    ],
)
def test_a_file_name_with_a_control_character_is_refused_not_cut(alice, kb, name, says):
    # Django's parser dropped such characters silently ("report.md").
    body = (
        b"--XyZ\r\n"
        b'Content-Disposition: form-data; name="file"; filename="' + name + b'"\r\n'
        b"Content-Type: text/markdown\r\n\r\n# hi\r\n--XyZ--\r\n"
    )

    response = alice.client.generic(
        "POST", kb, body, content_type="multipart/form-data; boundary=XyZ"
    )

    assert response.status_code == 400, response.content
    assert says in response.json()["error"]["message"]
    assert Document.objects.count() == 0
