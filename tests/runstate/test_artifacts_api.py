"""Artifacts of runs: upload a file or text, list, download byte for byte, delete, isolation."""

import hashlib

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from apps.audit.models import AuditEvent
from apps.runstate.models import Artifact

# Bytes no text codec round-trips: a download must give them back unchanged.
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4


@pytest.fixture
def run(alice):
    thread = alice.new_thread()
    return alice.post(f"/api/v1/threads/{thread['id']}/runs", {"name": "build"}).json()


def upload(actor, run_id, name="chart.png", data=PNG, content_type="image/png", **fields):
    file = SimpleUploadedFile(name, data, content_type=content_type)
    return actor.client.post(
        f"/api/v1/runs/{run_id}/artifacts", {"file": file, **fields}, format="multipart"
    )


def test_a_file_uploads_lists_and_downloads_byte_identical(alice, run):
    created = upload(alice, run["id"], kind="report")
    listed = alice.get(f"/api/v1/threads/{run['thread_id']}/artifacts")
    download = alice.get(f"/api/v1/artifacts/{created.json()['id']}")

    assert created.status_code == 201, created.content
    body = created.json()
    assert body["name"] == "chart.png" and body["kind"] == "report"
    assert body["size_bytes"] == len(PNG)
    assert body["sha256"] == hashlib.sha256(PNG).hexdigest()
    assert body["run_id"] == run["id"] and body["thread_id"] == run["thread_id"]
    assert [item["id"] for item in listed.json()["results"]] == [body["id"]]
    assert download.status_code == 200
    assert download.content == PNG
    assert download["Content-Type"] == "image/png"
    assert download["Content-Disposition"] == 'attachment; filename="chart.png"'
    assert download["X-Content-SHA256"] == body["sha256"]


def test_a_text_file_keeps_the_charset_it_was_sent_with(alice, run):
    latin = "Café au lait, 3 €".encode("cp1252")
    created = upload(alice, run["id"], "menu.txt", latin, "text/plain; charset=windows-1252")
    plain = upload(alice, run["id"], "notes.txt", b"plain", "text/plain")
    assert created.status_code == 201, created.content

    download = alice.get(f"/api/v1/artifacts/{created.json()['id']}")

    assert created.json()["content_type"] == "text/plain; charset=windows-1252"
    assert download["Content-Type"] == "text/plain; charset=windows-1252"
    assert download.content.decode("cp1252") == "Café au lait, 3 €"
    assert plain.json()["content_type"] == "text/plain; charset=utf-8"  # none sent: UTF-8


def test_json_text_is_stored_in_the_charset_its_content_type_names(alice, run):
    body = {"name": "menu.txt", "content": "café", "content_type": "text/plain; charset=latin-1"}

    created = alice.post(f"/api/v1/runs/{run['id']}/artifacts", body)

    assert created.status_code == 201, created.content
    download = alice.get(f"/api/v1/artifacts/{created.json()['id']}")
    assert download.content == b"caf\xe9"  # not UTF-8's caf\xc3\xa9, read as "cafÃ©"
    assert download["Content-Type"] == "text/plain; charset=latin-1"


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (
            {"name": "a.txt", "content": "日本", "content_type": "text/plain; charset=latin-1"},
            "content: '日' cannot be written in latin-1",
        ),
        (
            {"name": "a.txt", "content": "x", "content_type": "text/plain; charset=bogus-charset"},
            "content_type: charset 'bogus-charset' is not one this server knows",
        ),
        (
            {"name": "a.txt", "content": "x", "content_type": "text/plain; charset=rot13"},
            "content_type: charset 'rot13' is not one this server knows",
        ),
    ],
)
def test_text_its_charset_cannot_hold_is_refused(alice, run, body, says):
    response = alice.post(f"/api/v1/runs/{run['id']}/artifacts", body)

    assert response.status_code == 400
    assert response.json()["error"]["message"].startswith(says)


def test_a_text_file_not_in_its_charset_is_refused_and_one_naming_none_is_not_marked(alice, run):
    bad = upload(alice, run["id"], "a.txt", b"caf\xe9", "text/plain; charset=utf-8")
    unmarked = upload(alice, run["id"], "b.txt", b"caf\xe9", "text/plain")

    assert bad.status_code == 400
    assert bad.json()["error"]["message"].startswith("file: not valid utf-8, the charset")
    assert unmarked.status_code == 201, unmarked.content
    assert unmarked.json()["content_type"] == "text/plain"  # not UTF-8, so not said to be


def test_json_text_is_an_artifact_with_a_type_from_its_name(alice, run):
    created = alice.post(
        f"/api/v1/runs/{run['id']}/artifacts",
        {"name": "spec.md", "kind": "spec", "content": "# Spec\nÜber alles\n"},
    )
    plain = alice.post(f"/api/v1/runs/{run['id']}/artifacts", {"name": "notes", "content": "x"})

    assert created.status_code == 201, created.content
    download = alice.get(f"/api/v1/artifacts/{created.json()['id']}")
    assert download.content == "# Spec\nÜber alles\n".encode()
    assert download["Content-Type"] == "text/markdown; charset=utf-8"
    assert plain.json()["content_type"] == "text/plain; charset=utf-8"
    assert plain.json()["kind"] == "file"


def test_a_run_filter_lists_one_runs_artifacts(alice, run):
    other = alice.post(f"/api/v1/threads/{run['thread_id']}/runs", {}).json()
    upload(alice, run["id"], name="a.png")
    upload(alice, other["id"], name="b.png")

    listed = alice.get(f"/api/v1/threads/{run['thread_id']}/artifacts", {"run_id": other["id"]})
    bad = alice.get(f"/api/v1/threads/{run['thread_id']}/artifacts", {"run_id": "nope"})

    assert [item["name"] for item in listed.json()["results"]] == ["b.png"]
    assert bad.status_code == 400 and "run_id" in str(bad.json()["error"])


def test_the_size_cap_is_the_setting(alice, run, settings):
    settings.ARTIFACT_MAX_BYTES = 100

    too_big = upload(alice, run["id"], data=b"x" * 101)
    text = alice.post(
        f"/api/v1/runs/{run['id']}/artifacts", {"name": "a.txt", "content": "y" * 101}
    )
    fits = upload(alice, run["id"], data=b"x" * 100)

    assert too_big.status_code == 413
    assert too_big.json()["error"]["message"].startswith("file: 101 bytes; the limit is 100")
    assert text.status_code == 413 and text.json()["error"]["message"].startswith("content: ")
    assert fits.status_code == 201
    assert Artifact.objects.count() == 1


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"name": "a/b.md", "content": "x"}, "name: "),
        ({"name": "a.md", "content": "x", "kind": "Big Kind"}, "kind: "),
        ({"name": "a.md", "content": "x", "content_type": "not a type"}, "content_type: "),
        ({"content": "x"}, "name"),
        ({"name": "a.md", "content": "x", "colour": "red"}, "colour"),
    ],
)
def test_bad_input_answers_400_naming_the_field(alice, run, body, says):
    response = alice.post(f"/api/v1/runs/{run['id']}/artifacts", body)

    assert response.status_code == 400, response.content
    assert says in str(response.json()["error"])
    assert Artifact.objects.count() == 0


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        (
            {"file": [SimpleUploadedFile("a.txt", b"a"), SimpleUploadedFile("b.txt", b"b")]},
            "file: 2 files in one request; send one file per request.",
        ),
        (
            {"file": SimpleUploadedFile("a.txt", b"a"), "kind": ["report", "spec"]},
            "kind: Sent 2 times; send it once.",
        ),
    ],
    ids=["two-files", "a-field-twice"],
)
def test_a_multipart_field_sent_twice_is_a_400_naming_it(alice, run, fields, says):
    response = alice.client.post(f"/api/v1/runs/{run['id']}/artifacts", fields, format="multipart")

    assert response.status_code == 400, response.content
    assert response.json()["error"]["message"] == says
    assert Artifact.objects.count() == 0


def test_another_agent_gets_404(alice, bob, run):
    artifact = upload(alice, run["id"]).json()

    assert bob.get(f"/api/v1/artifacts/{artifact['id']}").status_code == 404
    assert bob.delete(f"/api/v1/artifacts/{artifact['id']}").status_code == 404
    assert bob.get(f"/api/v1/threads/{run['thread_id']}/artifacts").status_code == 404
    assert upload(bob, run["id"]).status_code == 404
    assert Artifact.objects.count() == 1


def test_delete_is_audited_and_the_thread_takes_its_artifacts(alice, run):
    first = upload(alice, run["id"], name="a.png").json()
    upload(alice, run["id"], name="b.png")

    assert alice.delete(f"/api/v1/artifacts/{first['id']}").status_code == 204
    assert alice.get(f"/api/v1/artifacts/{first['id']}").status_code == 404
    assert alice.delete(f"/api/v1/threads/{run['thread_id']}").status_code == 204
    assert Artifact.objects.count() == 0
    audited = AuditEvent.objects.filter(object_type="artifact").order_by("id")
    assert list(audited.values_list("action", "actor")) == [
        ("artifact.create", "agent:acme/alice"),
        ("artifact.create", "agent:acme/alice"),
        ("artifact.delete", "agent:acme/alice"),
    ]


def test_a_latin1_text_artifact_is_found_by_its_words(alice, run):
    body = {
        "name": "menu.txt",
        "content": "Crème brûlée",
        "content_type": "text/plain; charset=latin-1",
    }
    assert alice.post(f"/api/v1/runs/{run['id']}/artifacts", body).status_code == 201

    found = alice.post("/api/v1/search", {"query": "brûlée", "scopes": ["artifacts"]}).json()

    assert [hit["content"] for hit in found["results"]] == ["Crème brûlée"]
