"""The curator's knowledge pages: knowledge bases, uploads with live progress, chunks."""

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import override_settings

from apps.audit.models import AuditEvent
from apps.jobs.services import job_run_pending
from apps.knowledge.models import Chunk, Document, DocumentStatus, KnowledgeBase
from apps.knowledge.services import document_from_text, knowledge_base_create
from tests.pdfs import make_pdf
from tests.races import after_statement, deleted_elsewhere

HTMX = {"HTTP_HX_REQUEST": "true"}
MARKDOWN = b"# Runbook\n\nIntro.\n\n## Restarts\n\nRestart the worker with systemctl.\n"
XSS = "<script>alert(1)</script>"


@pytest.fixture
def curator(as_role):
    return as_role("curator")


@pytest.fixture
def kb(alice):
    return knowledge_base_create(project=alice.agent.project, slug="ops", name="Operations")


def _files(*pairs):
    return [SimpleUploadedFile(name, content) for name, content in pairs]


def _upload(client, kb, *pairs, **extra):
    return client.post(f"/console/knowledge/{kb.id}/upload/", {"files": _files(*pairs)}, **extra)


def _text(kb, title, text, **kwargs):
    return document_from_text(kb=kb, title=title, text=text, actor="test", **kwargs).document


# --- Knowledge bases ----------------------------------------------------------------------------


def test_it_lists_the_knowledge_bases_of_every_project(curator, alice, carol, kb):
    knowledge_base_create(project=carol.agent.project, slug="legal", name="Contracts")
    _text(kb, "Runbook", "Restart the worker.")

    response = curator.get("/console/knowledge/")

    assert response.status_code == 200
    content = response.content.decode()
    assert "Operations" in content and "Contracts" in content
    assert response.context["page"].object_list[0].document_count == 1


def test_it_filters_by_project_and_htmx_gets_the_list_fragment(curator, alice, carol, kb):
    knowledge_base_create(project=carol.agent.project, slug="legal", name="Contracts")
    globex = carol.agent.project.id

    page = curator.get("/console/knowledge/", {"project": globex})
    fragment = curator.get(
        "/console/knowledge/",
        {"project": globex},
        HTTP_HX_TARGET="knowledge-base-list",
        **HTMX,
    )

    assert [k.slug for k in page.context["page"]] == ["legal"]
    body = fragment.content.decode()
    assert body.startswith('<section id="knowledge-base-list">')
    assert "Contracts" in body and "Operations" not in body and "<html" not in body


def test_the_list_paginates(curator, alice):
    for n in range(30):
        knowledge_base_create(project=alice.agent.project, slug=f"kb-{n:02d}")

    first = curator.get("/console/knowledge/")
    second = curator.get("/console/knowledge/", {"page": 2})

    assert len(first.context["page"]) == 25
    assert [k.slug for k in second.context["page"]] == [f"kb-{n}" for n in range(25, 30)]
    assert "page=2" in first.content.decode()


def test_it_creates_a_knowledge_base_and_opens_it(curator, alice):
    body = {"project": alice.agent.project.id, "slug": "manuals", "name": "Manuals"}

    response = curator.post("/console/knowledge/", {**body, "description": "Pump manuals"})

    kb = KnowledgeBase.objects.get(slug="manuals")
    assert (kb.project, kb.name, kb.description) == (alice.agent.project, "Manuals", "Pump manuals")
    assert response.status_code == 302
    assert response["Location"] == f"/console/knowledge/{kb.id}/"


def test_an_htmx_create_is_sent_to_the_new_knowledge_base(curator, alice):
    response = curator.post(
        "/console/knowledge/", {"project": alice.agent.project.id, "slug": "faq"}, **HTMX
    )

    kb = KnowledgeBase.objects.get(slug="faq")
    assert response.status_code == 204
    assert response["HX-Location"] == f"/console/knowledge/{kb.id}/"
    assert kb.name == "faq"


@pytest.mark.parametrize(
    "body, error",
    [
        ({"slug": "ops"}, "A knowledge base &#x27;ops&#x27; exists in this project."),
        ({"slug": "Not A Slug"}, "Enter a valid “slug”"),
        ({"slug": "fresh", "project": ""}, "This field is required."),
    ],
    ids=["duplicate", "bad-slug", "no-project"],
)
def test_bad_input_to_create_is_a_form_error(curator, alice, kb, body, error):
    data = {"project": alice.agent.project.id, **body}

    response = curator.post("/console/knowledge/", data, **HTMX)

    content = response.content.decode()
    assert response.status_code == 200
    assert content.startswith('<form id="knowledge-base-create"')
    assert error in content
    assert KnowledgeBase.objects.count() == 1


# --- Uploads and the document list ------------------------------------------------------------


def test_it_uploads_several_files_and_reports_the_refused_ones(curator, kb):
    _text(kb, "Old", "Restart the worker.")

    response = _upload(
        curator,
        kb,
        ("runbook.md", MARKDOWN),
        ("manual.pdf", make_pdf(["Pump manual page one."])),
        ("tool.exe", b"MZ\x90\x00binary"),
        ("empty.txt", b""),
        ("again.txt", b"Restart the worker."),
        HTTP_HX_TARGET="document-list",
        **HTMX,
    )

    content = response.content.decode()
    assert response.status_code == 200
    assert content.startswith('<section id="document-list"')
    assert "tool.exe was refused: The file is a Windows executable" in content
    assert "empty.txt was refused: The file is empty." in content
    assert "again.txt is already stored as “Old”; skipped." in content
    assert "Stored 2 files; ingesting now." in content
    assert 'hx-swap-oob="true"' in content  # the messages come along out of band
    stored = Document.objects.filter(knowledge_base=kb).exclude(title="Old")
    assert sorted(d.title for d in stored) == ["manual.pdf", "runbook.md"]
    assert {d.uploaded_by for d in stored} == {"user:curator"}


def test_a_plain_upload_redirects_back_to_the_knowledge_base(curator, kb):
    response = _upload(curator, kb, ("runbook.md", MARKDOWN), follow=True)

    assert response.redirect_chain == [(f"/console/knowledge/{kb.id}/", 302)]
    assert "Stored 1 file; ingesting now." in response.content.decode()
    assert "runbook.md" in response.content.decode()


@override_settings(KNOWLEDGE_MAX_UPLOAD_BYTES=1000)
def test_an_upload_over_the_limit_is_refused_with_a_clear_message(curator, kb):
    response = _upload(curator, kb, ("small.md", MARKDOWN), ("big.txt", b"x" * 5000), **HTMX)

    assert "over the upload limit of 1000" in response.content.decode()
    assert "nothing was stored" in response.content.decode()
    assert Document.objects.count() == 0


def test_an_upload_without_files_says_what_to_do(curator, kb):
    response = curator.post(f"/console/knowledge/{kb.id}/upload/", {}, **HTMX)

    assert "Choose or drop at least one file" in response.content.decode()
    assert Document.objects.count() == 0


def test_the_document_list_polls_until_every_document_is_done(curator, kb):
    _upload(curator, kb, ("runbook.md", MARKDOWN), ("bad.pdf", b"%PDF-1.4 broken"))
    poll = {"HTTP_HX_TARGET": "document-list", **HTMX}

    pending = curator.get(f"/console/knowledge/{kb.id}/", **poll).content.decode()
    job_run_pending()
    done = curator.get(f"/console/knowledge/{kb.id}/", **poll).content.decode()

    assert pending.startswith('<section id="document-list"')
    assert 'hx-trigger="every 1s"' in pending
    assert f'hx-get="/console/knowledge/{kb.id}/?page=1"' in pending
    assert 'max="100" value="0"' in pending  # a <progress> bar: no inline style under the CSP
    assert 'hx-trigger="every 1s"' not in done
    assert 'max="100" value="100"' in done
    assert '<span class="badge ready">ready</span>' in done
    assert '<span class="badge failed">failed</span>' in done
    failed = Document.objects.get(title="bad.pdf")
    assert failed.error and failed.error[:40] in done


def test_the_document_list_paginates(curator, kb):
    for n in range(27):
        _text(kb, f"note {n}", f"text {n}")

    response = curator.get(f"/console/knowledge/{kb.id}/", {"page": 2})

    assert len(response.context["page"]) == 2
    assert "Page 2 of 2" in response.content.decode()


def test_pasted_text_becomes_a_document(curator, kb):
    response = curator.post(
        f"/console/knowledge/{kb.id}/text/",
        {"title": "Backups", "text": "# Backups\n\nNightly at 02:00."},
        HTTP_HX_TARGET="paste-text",
        **HTMX,
    )

    content = response.content.decode()
    document = Document.objects.get(knowledge_base=kb)
    assert (document.title, document.status, document.uploaded_by) == (
        "Backups",
        DocumentStatus.PENDING,
        "user:curator",
    )
    assert content.startswith('<form id="paste-text"')
    assert '<section id="document-list" hx-swap-oob="true"' in content
    assert "Stored “Backups”; ingesting it." in content


def test_blank_pasted_text_is_a_form_error(curator, kb):
    response = curator.post(
        f"/console/knowledge/{kb.id}/text/", {"title": "Nothing", "text": "   \n"}, **HTMX
    )

    assert "Must not be blank." in response.content.decode()
    assert 'value="Nothing"' in response.content.decode()
    assert Document.objects.count() == 0


# --- The document page --------------------------------------------------------------------------


def test_the_document_page_lists_chunks_with_their_page_numbers(curator, kb):
    _upload(curator, kb, ("manual.pdf", make_pdf(["Pump start procedure.", "Pump stop steps."])))
    job_run_pending()
    document = Document.objects.get()

    response = curator.get(f"/console/knowledge/documents/{document.id}/")

    content = response.content.decode()
    assert response.status_code == 200
    assert '<span class="badge ready">ready</span>' in content
    chunks = list(response.context["page"])
    assert [c.metadata.get("page") for c in chunks] == [1, 2]
    assert "Pump start procedure." in content and "Pump stop steps." in content
    assert 'hx-trigger="every 1s"' not in content


def test_the_document_page_shows_markdown_headings(curator, kb):
    _upload(curator, kb, ("runbook.md", MARKDOWN))
    job_run_pending()
    document = Document.objects.get()

    content = curator.get(f"/console/knowledge/documents/{document.id}/").content.decode()

    assert "<td>Runbook &gt; Restarts</td>" in content
    assert "Restart the worker with systemctl." in content


def test_the_chunk_list_paginates(curator, kb):
    text = "\n\n".join(f"## Part {n}\n\nParagraph number {n}." for n in range(25))
    document = _text(kb, "Parts", text)
    job_run_pending()

    second = curator.get(f"/console/knowledge/documents/{document.id}/", {"page": 2})

    assert [c.chunk_index for c in second.context["page"]] == [20, 21, 22, 23, 24]


def test_reindex_ingests_the_document_again(curator, kb):
    document = _text(kb, "Runbook", "Restart the worker.")
    job_run_pending()

    response = curator.post(
        f"/console/knowledge/documents/{document.id}/reindex/",
        HTTP_HX_TARGET="document-state",
        **HTMX,
    )

    content = response.content.decode()
    assert content.startswith('<section id="document-state"')
    assert 'hx-trigger="every 1s"' in content
    document.refresh_from_db()
    assert document.status == DocumentStatus.PENDING
    job_run_pending()
    document.refresh_from_db()
    assert (document.status, document.chunk_count) == (DocumentStatus.READY, 1)


@pytest.mark.django_db(transaction=True)
def test_a_document_deleted_meanwhile_by_another_request_is_said_so(client, kb):
    # A superuser: the role groups come from a migration, which an earlier transactional
    # test's flush may have emptied.
    client.force_login(User.objects.create_superuser(username="root", password="pw"))
    document = _text(kb, "Runbook", "Restart the worker.")
    gone = Document.objects.filter(pk=document.pk)

    with after_statement('FROM "knowledge_document"', lambda: deleted_elsewhere(gone)):
        response = client.post(f"/console/knowledge/documents/{document.id}/delete/", follow=True)

    assert response.status_code == 200
    assert "“Runbook” was deleted meanwhile, by another request." in response.content.decode()
    assert not AuditEvent.objects.filter(action="document.delete").exists()


def test_delete_removes_the_document_and_records_who_did_it(curator, kb):
    document = _text(kb, "Runbook", "Restart the worker.")
    job_run_pending()
    page = curator.get(f"/console/knowledge/documents/{document.id}/").content.decode()

    response = curator.post(f"/console/knowledge/documents/{document.id}/delete/", follow=True)

    # A plain form (not htmx): the browser follows the redirect and shows the knowledge base.
    assert (
        'data-confirm="Delete this document' in page
        and "hx-post" not in page.split("knowledge-document-delete")[0][-400:]
    )
    assert response.redirect_chain == [(f"/console/knowledge/{kb.id}/", 302)]
    assert 'id="document-list"' in response.content.decode()
    assert not Document.objects.filter(pk=document.pk).exists()
    event = AuditEvent.objects.get(action="document.delete")
    assert (event.actor, event.object_id) == ("user:curator", str(document.id))


def test_unknown_ids_answer_404(curator):
    missing = "00000000-0000-0000-0000-000000000000"

    assert curator.get(f"/console/knowledge/{missing}/").status_code == 404
    assert curator.get(f"/console/knowledge/documents/{missing}/").status_code == 404
    assert curator.post(f"/console/knowledge/documents/{missing}/delete/").status_code == 404


# --- Access, CSRF, escaping ---------------------------------------------------------------------


def _urls(kb, document):
    return [
        ("get", "/console/knowledge/"),
        ("post", "/console/knowledge/"),
        ("get", f"/console/knowledge/{kb.id}/"),
        ("post", f"/console/knowledge/{kb.id}/upload/"),
        ("post", f"/console/knowledge/{kb.id}/text/"),
        ("get", f"/console/knowledge/documents/{document.id}/"),
        ("post", f"/console/knowledge/documents/{document.id}/reindex/"),
        ("post", f"/console/knowledge/documents/{document.id}/delete/"),
    ]


@pytest.mark.parametrize("role", ["operator", "moderator"])
def test_other_roles_get_403_everywhere(as_role, kb, role):
    document = _text(kb, "Runbook", "Restart the worker.")
    client = as_role(role)

    for method, url in _urls(kb, document):
        assert getattr(client, method)(url).status_code == 403, (method, url)
    assert Document.objects.filter(pk=document.pk).exists()


def test_every_post_needs_a_csrf_token(csrf_client, alice, kb):
    document = _text(kb, "Runbook", "Restart the worker.")
    client = csrf_client()

    for method, url in _urls(kb, document):
        if method == "post":
            assert client.post(url, {"slug": "x", "title": "t", "text": "t"}).status_code == 403
    assert Document.objects.filter(pk=document.pk).exists()
    assert KnowledgeBase.objects.count() == 1
    client.get(f"/console/knowledge/documents/{document.id}/")  # sets the CSRF cookie
    token = client.cookies["csrftoken"].value
    with_token = client.post(
        f"/console/knowledge/documents/{document.id}/delete/", HTTP_X_CSRFTOKEN=token
    )
    assert with_token.status_code == 302
    assert not Document.objects.filter(pk=document.pk).exists()


def test_stored_markup_renders_inert(curator, alice):
    kb = knowledge_base_create(
        project=alice.agent.project, slug="xss", name=XSS, description=f"about {XSS}"
    )
    document = _text(kb, XSS, f"# {XSS}\n\nbody {XSS}")
    job_run_pending()

    pages = [
        curator.get("/console/knowledge/"),
        curator.get(f"/console/knowledge/{kb.id}/"),
        curator.get(f"/console/knowledge/documents/{document.id}/"),
    ]

    for response in pages:
        content = response.content.decode()
        assert XSS not in content
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in content


def test_deleting_a_knowledge_base_confirms_what_goes_and_audits_it(curator, kb):
    for n in range(2):
        _text(kb, f"Doc {n}", f"Paragraph {n} about the worker.")
    job_run_pending()
    chunks = Chunk.objects.filter(document__knowledge_base=kb).count()

    confirm = curator.get(f"/console/knowledge/{kb.id}/delete/").content.decode()
    response = curator.post(f"/console/knowledge/{kb.id}/delete/", follow=True)

    assert '<strong data-count="documents">2 documents</strong>' in confirm
    assert f'<strong data-count="chunks">{chunks} chunk' in confirm and chunks >= 2
    assert response.redirect_chain == [("/console/knowledge/", 302)]
    assert f"with 2 documents and {chunks} chunks" in response.content.decode()
    assert not KnowledgeBase.objects.filter(pk=kb.pk).exists()
    assert not Chunk.objects.filter(document__knowledge_base_id=kb.pk).exists()
    event = AuditEvent.objects.get(action="knowledge_base.delete")
    assert event.actor == "user:curator"
    assert event.before == {
        "slug": "ops",
        "name": "Operations",
        "description": "",
        "documents": 2,
        "chunks": chunks,
    }


def test_creating_uploading_and_reindexing_are_audited(curator, alice):
    project = alice.agent.project
    created = curator.post(
        "/console/knowledge/", {"project": project.id, "slug": "hr", "name": "HR"}, follow=True
    )
    kb = KnowledgeBase.objects.get(slug="hr")
    assert created.status_code == 200
    upload = SimpleUploadedFile("leave.md", b"# Leave\n\nTwenty days a year.")
    curator.post(f"/console/knowledge/{kb.id}/upload/", {"files": [upload]})
    document = Document.objects.get(knowledge_base=kb)
    job_run_pending()
    curator.post(f"/console/knowledge/documents/{document.id}/reindex/")

    knowledge = AuditEvent.objects.filter(
        project=project, object_type__in=["knowledge_base", "document"]
    )
    events = {e.action: e for e in knowledge}
    assert events["knowledge_base.create"].after == {"slug": "hr", "name": "HR", "description": ""}
    assert events["document.upload"].after["filename"] == "leave.md"
    assert events["document.reindex"].object_id == str(document.id)
    assert {e.actor for e in events.values()} == {"user:curator"}
