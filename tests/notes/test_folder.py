"""manage.py notes_export / notes_import: one .md per note with YAML front matter, and a
lossless round trip into an empty project."""

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from apps.audit.models import AuditEvent
from apps.notes.models import Note
from tests.conftest import make_actor
from tests.notes.conftest import write

# Content that a careless writer would change: CRLF, trailing spaces, no final newline, a
# front-matter-looking block, unicode, a [[link]] and raw HTML.
AWKWARD = "# Deploy\r\nStep 1  \n---\nnot: front matter\n---\nCafé ☕ [[ops/rollback]] <b>x</b>"


def _run(command, *args) -> str:
    out = StringIO()
    call_command(command, *args, stdout=out)
    return out.getvalue()


def _notes(project) -> list[tuple]:
    """Every note of the project as (owner, scope, path, title, content, tags, version, links)."""
    rows = []
    for note in Note.objects.filter(project=project).order_by("scope", "path"):
        links = list(note.links.order_by("position").values_list("target_path", flat=True))
        owner = note.agent.slug if note.agent else None
        rows.append(
            (owner, note.scope, note.path, note.title, note.content, note.tags, note.version, links)
        )
    return rows


def test_export_writes_one_file_per_note_with_front_matter(alice, tmp_path):
    note = write(alice, "ops/deploy.md", AWKWARD, tags=["ops", "2024"], scope="shared")
    alice.patch(f"/api/v1/notes/{note['id']}", {"version": 1, "title": "yes"})
    write(alice, "mine.md", "personal")

    out = _run("notes_export", "--project", "acme", str(tmp_path / "dump"))

    assert out.strip() == f"1 note(s) written to {tmp_path / 'dump'}."
    files = sorted(p.relative_to(tmp_path / "dump").as_posix() for p in tmp_path.rglob("*.md"))
    assert files == ["shared/ops/deploy.md"]
    data = (tmp_path / "dump/shared/ops/deploy.md").read_bytes()
    assert (
        data
        == (
            f"---\nid: {note['id']}\nscope: shared\ntitle: 'yes'\ntags:\n- ops\n- '2024'\n"
            f"version: 2\n---\n{AWKWARD}"
        ).encode()
    )


def test_export_then_import_into_an_empty_project_gives_identical_notes(alice, bob, tmp_path):
    write(alice, "ops/deploy.md", AWKWARD, tags=["ops", "urgent"], scope="shared")
    write(alice, "ops/rollback.md", "Undo: [[ops/deploy]] then [[missing/page]].", scope="shared")
    empty = write(alice, "empty.md", "", scope="shared")
    alice.patch(f"/api/v1/notes/{empty['id']}", {"version": 1, "title": "Nothing yet"})
    write(alice, "untitled.md", "# A heading, but no title", scope="shared", title="")
    write(alice, "me/todo.md", "Check [[ops/deploy]] and [[me/ideas]].", tags=["todo"])
    write(alice, "me/ideas.md", "ideas")
    write(bob, "bob.md", "bob's own, not exported")
    make_actor("initech", "alice")  # the empty project, with an agent of the same name

    _run("notes_export", "--project", "acme", "--agent", "alice", str(tmp_path / "dump"))
    out = _run("notes_import", "--project", "initech", "--agent", "alice", str(tmp_path / "dump"))

    acme, initech = (
        Note.objects.filter(project__slug=s).first().project for s in ("acme", "initech")
    )
    expected = [row for row in _notes(acme) if row[0] != "bob"]
    assert out.strip() == "6 created, 0 updated, 0 unchanged."
    assert _notes(initech) == expected
    # The same links and backlinks: a second export is byte for byte the first, ids aside.
    _run("notes_export", "--project", "initech", "--agent", "alice", str(tmp_path / "again"))
    for first in (tmp_path / "dump").rglob("*.md"):
        second = tmp_path / "again" / first.relative_to(tmp_path / "dump")
        assert _body(second) == _body(first)
    assert (
        AuditEvent.objects.filter(actor="manage.py notes_import", action="note.create").count() == 6
    )


def _body(file: Path) -> bytes:
    """The file without its id line (a new project's notes get ids of their own)."""
    return b"\n".join(
        line for line in file.read_bytes().split(b"\n") if not line.startswith(b"id: ")
    )


def test_importing_into_a_fresh_database_keeps_ids_and_a_second_import_changes_nothing(
    alice, tmp_path
):
    note = write(alice, "a.md", "alpha [[b]]", scope="shared")
    _run("notes_export", "--project", "acme", str(tmp_path / "dump"))
    Note.objects.all().delete()

    first = _run("notes_import", "--project", "acme", str(tmp_path / "dump"))
    again = _run("notes_import", "--project", "acme", str(tmp_path / "dump"))

    assert first.strip() == "1 created, 0 updated, 0 unchanged."
    assert again.strip() == "0 created, 0 updated, 1 unchanged."
    restored = Note.objects.get()
    assert str(restored.id) == note["id"] and restored.content == "alpha [[b]]"


def test_an_edited_file_updates_its_note_and_raises_its_version(alice, tmp_path):
    note = write(alice, "a.md", "alpha", scope="shared")
    _run("notes_export", "--project", "acme", str(tmp_path / "dump"))
    file = tmp_path / "dump/shared/a.md"
    file.write_bytes(file.read_bytes().replace(b"alpha", b"beta [[c]]"))

    out = _run("notes_import", "--project", "acme", str(tmp_path / "dump"))

    assert out.strip() == "0 created, 1 updated, 0 unchanged."
    read = alice.get(f"/api/v1/notes/{note['id']}").json()
    assert read["content"] == "beta [[c]]" and read["version"] == 2
    assert read["links"] == [{"path": "c.md", "note_id": None, "missing": True}]


@pytest.mark.parametrize(
    "name, data, message",
    [
        ("shared/a.md", b"no front matter", "does not start with '---'"),
        ("shared/a.md", b"---\nscope: shared\n", "no closing '---'"),
        ("shared/a.md", b"---\nscope: [\n---\n", "not YAML"),
        ("shared/a.md", b"---\nscope: personal\n---\n", "scope 'personal' but the file is under"),
        ("shared/a.md", b"---\nversion: 0\n---\n", "'version' must be a whole number"),
        ("shared/a.md", b"---\nid: 12\n---\n", "'id' must be a str"),
        ("shared/a.md", b"---\nid: nope\n---\n", "is not a UUID"),
        ("shared/a.md", b"---\ntags: [has space]\n---\n", "tags:"),
        ("shared/a.md", b"---\n---\n\xff", "not UTF-8"),
        ("personal/a.md", b"---\nscope: personal\n---\n", "name its agent with --agent"),
        ("elsewhere/a.md", b"---\n---\n", "not under"),
    ],
)
def test_a_bad_file_is_named_and_nothing_is_imported(alice, tmp_path, name, data, message):
    good = tmp_path / "dump/shared/good.md"
    good.parent.mkdir(parents=True)
    good.write_bytes(b"---\nscope: shared\n---\nfine")
    bad = tmp_path / "dump" / name
    bad.parent.mkdir(parents=True, exist_ok=True)
    bad.write_bytes(data)

    with pytest.raises(CommandError) as raised:
        _run("notes_import", "--project", "acme", str(tmp_path / "dump"))

    assert message in str(raised.value) and str(bad) in str(raised.value)
    assert not Note.objects.exists()


def test_export_refuses_a_folder_with_files_in_it(alice, tmp_path):
    (tmp_path / "old.md").write_text("x")

    with pytest.raises(CommandError, match="must be an empty folder"):
        _run("notes_export", "--project", "acme", str(tmp_path))


@pytest.mark.parametrize(
    "args, message",
    [
        (["--project", "nope"], "No project 'nope'"),
        (["--project", "acme", "--agent", "nobody"], "No agent 'nobody'"),
    ],
)
def test_unknown_projects_and_agents_are_named(alice, tmp_path, args, message):
    for command in ("notes_export", "notes_import"):
        with pytest.raises(CommandError, match=message):
            _run(command, *args, str(tmp_path / "x"))
