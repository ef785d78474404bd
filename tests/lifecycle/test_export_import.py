"""`export_project` / `import_project`: a project's memory state leaves and comes back unchanged."""

import json
from io import StringIO

import pytest
from django.core.files.storage import default_storage
from django.core.management import CommandError, call_command

from apps.jobs.services import job_run_pending
from apps.knowledge.models import Document
from apps.lifecycle.portability import exported_models, project_rows
from apps.search.models import ItemEmbedding, SearchItem
from apps.tenancy.models import ApiKey, Project
from tests.conftest import make_actor
from tests.lifecycle.test_forget_resource import _live_conversation

RUNBOOK = b"# Runbook\n\n## Restarts\n\nRestart the boiler worker.\n\n## Backups\n\nNightly.\n"
QUERY = "Elm Street boiler leaks"


def _rows(project) -> dict[str, dict]:
    """Every exported row of the project, field by field, by model and id."""
    return {
        model._meta.label: {
            row.pk: {f.attname: f.value_from_object(row) for f in model._meta.concrete_fields}
            for row in project_rows(model, project)
        }
        for model in exported_models()
    }


def _found(actor) -> list[tuple]:
    scopes = ["messages", "episodic", "notes", "knowledge", "artifacts"]
    found = []
    for query in (QUERY, "repair quote"):
        # Every match (top_k above the items held): no tie straddles the cut.
        body = {"query": query, "scopes": scopes, "top_k": 50}
        response = actor.post("/api/v1/search", body)
        assert response.status_code == 200, response.content
        results = response.json()["results"]
        found += [(hit["type"], hit["id"], hit.get("thread_id")) for hit in results]
    # The same hits; not their order: items that tie on a signal are ranked by the index's own
    # row ids, which an import makes anew (and rank fusion turns a changed rank into a score).
    return sorted(found)


@pytest.fixture
def acme(alice, bob, carol, use_embedder):
    use_embedder(alice)
    thread = _live_conversation(alice, "user-1", compaction=True)
    _live_conversation(bob, "user-2")
    _live_conversation(carol, "user-1")  # another project: not exported
    older = alice.post("/api/v1/episodic", {"content": "Prefers mornings", "resource_id": "user-1"})
    alice.post(
        "/api/v1/episodic",
        {"content": "Prefers evenings", "resource_id": "user-1", "supersedes": older.json()["id"]},
    )
    alice.post("/api/v1/notes", {"path": "ops/boilers.md", "content": "Elm Street boilers leak"})
    alice.post("/api/v1/knowledge-bases", {"slug": "ops"})
    alice.upload("/api/v1/knowledge-bases/ops/documents", "runbook.md", RUNBOOK)
    job_run_pending()
    return thread


def test_a_project_comes_back_row_for_row_and_answers_the_same(acme, alice, tmp_path):
    project = alice.agent.project
    prompt = alice.post(f"/api/v1/threads/{acme['id']}/context", {"query": "boiler"}).json()
    found = _found(alice)
    assert {"message", "note", "artifact"} <= {kind for kind, _, _ in found}
    before = _rows(project)
    assert all(before[label] for label in ("threads.Message", "episodic.MemoryEntry"))
    assert all(before[label] for label in ("notes.Note", "knowledge.Chunk", "runstate.Checkpoint"))
    assert any(row["supersedes_id"] for row in before["episodic.MemoryEntry"].values())
    stored = Document.objects.get(knowledge_base__project=project).file.name
    path = tmp_path / "acme.jsonl"

    call_command("export_project", "acme", str(path), stdout=StringIO())
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[0]["type"] == "header"
    assert {"tenancy.apikey", "search.searchitem"}.isdisjoint(line["type"] for line in lines)
    project.delete()
    default_storage.delete(stored)
    assert not SearchItem.objects.filter(project_id=project.pk).exists()

    call_command("import_project", str(path), stdout=StringIO())

    imported = Project.objects.get(slug="acme")
    assert _rows(imported) == before
    assert default_storage.open(stored).read() == RUNBOOK
    assert not ApiKey.objects.filter(agent__project=imported).exists()
    job_run_pending()  # the importer's embedder makes the vectors
    assert ItemEmbedding.objects.filter(item__project=imported).exists()
    again = make_actor("acme", "alice")
    assert _found(again) == found
    answer = again.post(f"/api/v1/threads/{acme['id']}/context", {"query": "boiler"}).json()
    assert answer["system_prompt"] == prompt["system_prompt"]


def test_importing_a_project_that_is_here_refuses(acme, alice, tmp_path):
    path = tmp_path / "acme.jsonl"
    call_command("export_project", "acme", str(path), stdout=StringIO())
    before = _rows(alice.agent.project)

    with pytest.raises(CommandError, match="'acme' already exists"):
        call_command("import_project", str(path), stdout=StringIO())

    assert _rows(alice.agent.project) == before


def test_another_projects_rows_are_not_exported(acme, carol, tmp_path):
    path = tmp_path / "acme.jsonl"
    call_command("export_project", "acme", str(path), stdout=StringIO())
    carols = {str(carol.agent.pk), str(carol.agent.project_id)}

    text = path.read_text()

    assert not any(pk in text for pk in carols)


def test_bad_input_is_a_clear_error(db, tmp_path):
    not_export = tmp_path / "x.jsonl"
    not_export.write_text('{"type": "threads.message"}\n')

    with pytest.raises(CommandError, match="No project 'nope'"):
        call_command("export_project", "nope", str(tmp_path / "y.jsonl"))
    with pytest.raises(CommandError, match="not a Memory Console export"):
        call_command("import_project", str(not_export))
    with pytest.raises(CommandError, match="Cannot read"):
        call_command("import_project", str(tmp_path / "missing.jsonl"))
