import pytest
from django.core.management import CommandError, call_command

from apps.knowledge.models import Document
from tests.pdfs import make_pdf


def test_it_ingests_a_folder_and_reports_each_file(alice, tmp_path, capsys):
    (tmp_path / "a.md").write_text("# Alpha\n\nalpha facts")
    (tmp_path / "guide.pdf").write_bytes(make_pdf(["page one text", "page two text"]))
    (tmp_path / "virus.pdf").write_bytes(b"MZ\x90\x00" * 10)

    call_command("ingest_folder", str(tmp_path), "--project", "acme", "--kb", "docs")

    out = capsys.readouterr().out
    assert "skipped" in out and "virus.pdf" in out and "Windows executable" in out
    assert "ingest [##############################] 2/2" in out
    assert sorted(Document.objects.values_list("title", "status")) == [
        ("a.md", "ready"),
        ("guide.pdf", "ready"),
    ]


def test_it_refuses_an_unknown_project_or_a_missing_folder(alice, tmp_path):
    with pytest.raises(CommandError, match="No project"):
        call_command("ingest_folder", str(tmp_path), "--project", "nope", "--kb", "docs")
    with pytest.raises(CommandError, match="is not a folder"):
        call_command("ingest_folder", str(tmp_path / "x"), "--project", "acme", "--kb", "docs")
