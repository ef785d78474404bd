"""One name, one thing: note paths, end users' ids and knowledge base slugs are taken in
Unicode NFC (slugs case-folded too), and names with control or bidirectional control
characters are refused with a 400 naming the field. A migration normalises existing rows and
reports, rather than merges, two rows that become one name.
"""

import importlib
from urllib.parse import quote

import pytest
from django.apps import apps

from apps.knowledge.models import KnowledgeBase
from apps.notes.models import Note
from apps.tenancy.models import Resource

NFC = "ops/\u00c4rger.md"  # Ä as one code point
NFD = "ops/A\u0308rger.md"  # A, then the combining diaeresis
MARTA_NFC, MARTA_NFD = "M\u00e4rta", "Ma\u0308rta"


def _refused(response, field: str) -> None:
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["message"].startswith(f"{field}:"), error
    assert list(error["details"]) == [field], error


def test_a_note_path_composed_two_ways_is_one_note(alice):
    made = alice.post("/api/v1/notes", {"path": NFD, "content": "Arger"})
    again = alice.post("/api/v1/notes", {"path": NFC, "content": "again"})
    linking = alice.post("/api/v1/notes", {"path": "index.md", "content": "[[ops/A\u0308rger]]"})

    assert made.status_code == 201 and made.json()["path"] == NFC
    assert again.status_code == 409 and again.json()["error"]["code"] == "path_taken"
    listed = alice.get("/api/v1/notes", {"path_prefix": "ops/A\u0308"}).json()["results"]
    assert [note["id"] for note in listed] == [made.json()["id"]]
    [link] = linking.json()["links"]
    assert (link["path"], link["note_id"]) == (NFC, made.json()["id"])


@pytest.mark.parametrize(
    "path",
    [
        "ops/\u202ecod.exe.md",  # right-to-left override
        "ops/a\u2066b.md",  # left-to-right isolate
        "ops/a\u200fb.md",  # right-to-left mark
        "ops/a\u0085b.md",  # C1 control (next line)
        "ops/a\u0007b.md",  # C0 control (bell)
    ],
)
def test_a_note_path_with_a_control_character_is_refused_naming_the_field(alice, path):
    _refused(alice.post("/api/v1/notes", {"path": path, "content": "x"}), "path")
    assert not Note.objects.exists()


def test_an_end_user_id_composed_two_ways_is_one_end_user_and_forgotten_whole(alice):
    alice.new_thread(resource_id=MARTA_NFD)
    alice.put(f"/api/v1/resources/{quote(MARTA_NFC)}/profile", {"version": 0, "content": "x"})

    assert list(Resource.objects.values_list("external_id", flat=True)) == [MARTA_NFC]
    forgotten = alice.delete(f"/api/v1/resources/{quote(MARTA_NFD)}")
    assert forgotten.status_code == 200, forgotten.content
    assert forgotten.json()["deleted"]["threads"] == 1
    assert forgotten.json()["deleted"]["profiles"] == 1


def test_an_end_user_id_typed_in_full_width_letters_is_the_same_end_user(alice):
    alice.new_thread(resource_id="\uff21nn")  # Ａnn
    alice.put("/api/v1/resources/Ann/profile", {"version": 0, "content": "x"})

    assert list(Resource.objects.values_list("external_id", flat=True)) == ["Ann"]
    forgotten = alice.delete(f"/api/v1/resources/{quote(chr(0xFF21) + 'nn')}")
    assert forgotten.json()["deleted"]["threads"] == 1
    assert forgotten.json()["deleted"]["profiles"] == 1


def test_other_compatibility_characters_stay_as_typed():
    from apps.core.text import name_normalise

    assert name_normalise("\ufb01le\u00b2") == "\ufb01le\u00b2"  # ﬁle², not file2
    assert name_normalise("\uff4b\uff42-\uff41") == "kb-a"


@pytest.mark.parametrize("resource_id", ["cust\u202e1", "cust\u00001", "cust\u001b1"])
def test_an_end_user_id_with_a_control_character_is_refused_naming_the_field(alice, resource_id):
    _refused(alice.post("/api/v1/threads", {"resource_id": resource_id}), "resource_id")
    assert not Resource.objects.exists()


def test_a_knowledge_base_slug_is_one_base_in_any_case(alice):
    made = alice.post("/api/v1/knowledge-bases", {"slug": "kb-a"})
    again = alice.post("/api/v1/knowledge-bases", {"slug": "KB-A"})
    upserted = alice.post("/api/v1/memory/upsert", {"content": "Lot C.", "namespace": "Kb-A"})

    assert made.status_code == 201 and again.status_code == 409
    assert upserted.status_code in (200, 201, 202), upserted.content
    assert alice.get("/api/v1/knowledge-bases/KB-A/documents").status_code == 200
    assert list(KnowledgeBase.objects.values_list("slug", flat=True)) == ["kb-a"]


def _migration(app: str, name: str):
    return importlib.import_module(f"apps.{app}.migrations.{name}")


def test_the_migration_normalises_end_user_ids_and_reports_a_collision(alice, capsys):
    acme = alice.agent.project
    Resource.objects.create(project=acme, external_id=MARTA_NFD)
    Resource.objects.create(project=acme, external_id="Jos\u0065\u0301")  # José, decomposed
    Resource.objects.create(project=acme, external_id="Jos\u00e9")  # and precomposed

    _migration("tenancy", "0002_resource_ids_nfc").forward(apps, None)

    ids = set(Resource.objects.values_list("external_id", flat=True))
    assert ids == {MARTA_NFC, "Jos\u0065\u0301", "Jos\u00e9"}
    assert "Not normalised: end user 'Jose\u0301'" in capsys.readouterr().out


def test_the_migration_normalises_note_paths_and_reports_a_collision(alice, capsys):
    project = alice.agent.project
    Note.objects.create(project=project, scope="shared", path=NFD, content="a")
    Note.objects.create(project=project, scope="shared", path="b/A\u0308.md", content="b")
    Note.objects.create(project=project, scope="shared", path="b/\u00c4.md", content="c")

    _migration("notes", "0002_note_paths_nfc").forward(apps, None)

    paths = set(Note.objects.values_list("path", flat=True))
    assert paths == {NFC, "b/A\u0308.md", "b/\u00c4.md"}
    assert "Not normalised: note" in capsys.readouterr().out


def test_the_migration_folds_knowledge_base_slugs_and_reports_a_collision(alice, capsys):
    project = alice.agent.project
    for slug in ("Ops", "kb-a", "KB-A"):
        KnowledgeBase.objects.create(project=project, slug=slug, name=slug)

    _migration("knowledge", "0005_knowledge_base_slugs_folded").forward(apps, None)

    assert set(KnowledgeBase.objects.values_list("slug", flat=True)) == {"ops", "kb-a", "KB-A"}
    assert "Not folded: knowledge base 'KB-A'" in capsys.readouterr().out
