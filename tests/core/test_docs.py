"""The README stays a guide, the docs' links lead somewhere, and generated tables stay current."""

import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from apps.memconfig.management.commands.docs_settings import BEGIN, END, settings_table
from apps.memconfig.schema import SETTINGS

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
CONFIGURATION = ROOT / "docs" / "configuration.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md")), ROOT / "bench" / "RESULTS.md"]
PAGES += sorted((ROOT / "bench" / "history").glob("*.md"))
LENGTH_CHECK = ROOT / ".ci" / "readme_length.py"


def _prose(text: str) -> str:
    """Return text without fenced code blocks and inline code, where brackets are not links."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)
    return re.sub(r"`[^`\n]*`", "", text)


def _anchors(page: Path) -> set[str]:
    """Return the anchors GitHub gives the headings of page (duplicates numbered -1, -2, …)."""
    seen: dict[str, int] = {}
    anchors = set()
    for heading in re.findall(r"^#{1,6} +(.+?) *$", _fenced_out(page.read_text()), re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", heading.replace("`", "").lower()).replace(" ", "-")
        anchors.add(f"{slug}-{seen[slug]}" if slug in seen else slug)
        seen[slug] = seen.get(slug, 0) + 1
    return anchors


def _fenced_out(text: str) -> str:
    return re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)


def _links(page: Path) -> list[str]:
    return re.findall(r"\]\(([^)\s]+)\)", _prose(page.read_text()))


def test_the_readme_is_at_most_400_lines_and_the_lint_step_says_so():
    passed = subprocess.run([sys.executable, LENGTH_CHECK], capture_output=True, text=True)

    assert len(README.read_text().splitlines()) <= 400
    assert passed.returncode == 0, passed.stdout


def test_the_lint_step_fails_on_a_readme_over_400_lines(tmp_path):
    long = tmp_path / "README.md"
    long.write_text("line\n" * 401)
    (tmp_path / "short.md").write_text("line\n" * 400)

    failed = subprocess.run([sys.executable, LENGTH_CHECK, long], capture_output=True, text=True)
    passed = subprocess.run(
        [sys.executable, LENGTH_CHECK, tmp_path / "short.md"], capture_output=True, text=True
    )

    assert failed.returncode == 1
    assert "401 lines, more than 400" in failed.stdout
    assert passed.returncode == 0


def test_the_lint_target_runs_the_docs_checks():
    makefile = (ROOT / "Makefile").read_text()
    lint = makefile.split("\nlint:", 1)[1].split("\n\n", 1)[0]

    assert "$(PY) .ci/readme_length.py" in lint
    assert "$(PY) manage.py docs_settings --check" in lint


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_relative_link_leads_to_a_file_and_heading_that_exist(page):
    broken = []
    for link in _links(page):
        if re.match(r"[a-z]+:", link):
            continue  # http(s), mailto: not this repository's
        path, _, anchor = link.partition("#")
        target = (page.parent / path).resolve() if path else page
        if not target.exists():
            broken.append(f"{link}: no {target.relative_to(ROOT)}")
        elif anchor and target.suffix == ".md" and anchor not in _anchors(target):
            broken.append(f"{link}: no heading #{anchor} in {target.relative_to(ROOT)}")

    assert broken == []


def test_the_link_check_sees_a_missing_heading(tmp_path):
    page = tmp_path / "a.md"
    page.write_text("# A page\n\n## `make bench`\n\n```sh\n# not a heading\n```\n")

    assert _anchors(page) == {"a-page", "make-bench"}


def test_the_committed_settings_table_is_the_generated_one(capsys):
    call_command("docs_settings", "--check")

    text = CONFIGURATION.read_text()
    committed = text.split(BEGIN, 1)[1].split(END, 1)[0].strip()
    assert committed == settings_table()
    assert f"| `{SETTINGS[0].key}` | `{SETTINGS[0].env_var}` |" in committed
    assert len(committed.splitlines()) == len(SETTINGS) + 2


def test_a_stale_settings_table_fails_the_check_and_write_replaces_it(tmp_path):
    page = tmp_path / "configuration.md"
    stale = f"# Configuration\n\n{BEGIN}\n| setting |\n| `gone` |\n{END}\n\nAfter.\n"
    page.write_text(stale)

    with pytest.raises(CommandError, match="stale settings table"):
        call_command("docs_settings", "--check", "--page", str(page))
    call_command("docs_settings", "--write", "--page", str(page))

    text = page.read_text()
    assert "`gone`" not in text
    assert text == f"# Configuration\n\n{BEGIN}\n{settings_table()}\n{END}\n\nAfter.\n"
    call_command("docs_settings", "--check", "--page", str(page))


def test_the_configuration_page_documents_every_environment_variable_the_code_reads():
    read = set()
    for folder in ("memory_console", "apps"):
        for path in (ROOT / folder).rglob("*.py"):
            read |= set(
                re.findall(r'env_(?:str|int|float|bool|list)\(\s*"([A-Z0-9_]+)"', path.read_text())
            )
    text = CONFIGURATION.read_text()

    assert len(read) > 40
    assert sorted(name for name in read if f"`{name}`" not in text) == []
