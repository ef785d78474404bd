"""`make bench`'s runner: each benchmark's table in RESULTS.md replaced, the old one kept.

bench/run_all.py runs real benchmark scripts in subprocesses; to stay well under a minute the
end-to-end test runs the two fastest (consolidation and observations, both in-process, no web
server) on the backend the suite runs on, into a temporary results file that already holds a
consolidation table and a search table. The replacing itself is also checked in-process
(bench/ on sys.path, as the script runs) on small made-up tables.
"""

import importlib.metadata
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from run_all import SCRIPTS, keep_in_history, markers, replace_tables  # noqa: E402

ONLY = ("consolidation", "observations")
OLD_CONSOLIDATION = (
    "2026-11-23 17:37 UTC — `make bench`, commit 4dd547e; machine: an older one\n\n"
    "| backend | case | figure | target | met |\n|---|---|---|---|---|\n"
    "| sqlite | 20 threads x 500 messages | throughput 671 msg/s |  |  |"
)
SEARCH = "2026-11-26, commit 001d808; machine: 2 cores\n\n| backend | case |\n|---|---|\n| x | y |"


def block(name: str, body: str) -> str:
    begin, end = markers(name)
    return f"## {name}\n\n{begin}\n{body}\n{end}\n"


def run_all(tmp_path: Path, backend: str, output: Path) -> tuple[subprocess.CompletedProcess, Path]:
    figures = tmp_path / "figures.jsonl"
    command = [sys.executable, str(ROOT / "bench" / "run_all.py"), "--quick"]
    command += ["--only", ",".join(ONLY), "--backend", backend]
    command += ["--output", str(output), "--figures", str(figures)]
    env = {**os.environ, "DATA_DIR": str(tmp_path / "data")}
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    return done, figures


def table_rows(text: str) -> list[list[str]]:
    rows = [line.strip("|").split(" | ") for line in text.splitlines() if line.startswith("| ")]
    return [[cell.strip() for cell in row] for row in rows]


def between_markers(text: str, name: str) -> str:
    begin, end = markers(name)
    return text.split(begin, 1)[1].split(end, 1)[0].strip("\n")


@pytest.fixture
def backend() -> str:
    return "postgres" if os.environ.get("DATABASE_URL", "").startswith("postgres") else "sqlite"


def test_a_quick_run_replaces_its_tables_and_moves_the_old_ones_to_history(tmp_path, backend):
    output = tmp_path / "RESULTS.md"
    intro = "# Benchmark results\n\nEarlier text stays.\n\n"
    before = block("consolidation", OLD_CONSOLIDATION) + "\n" + block("search", SEARCH)
    output.write_text(intro + before)

    done, figures = run_all(tmp_path, backend, output)

    assert done.returncode == 0, done.stderr[-3000:]
    text = output.read_text()
    assert text.startswith(intro + "## consolidation\n\n")
    assert between_markers(text, "search") == SEARCH
    assert "671 msg/s" not in text
    kept = (tmp_path / "history" / "2026-11-23-1737-consolidation.md").read_text()
    assert OLD_CONSOLIDATION in kept
    assert [path.name for path in (tmp_path / "history").iterdir()] == [
        "2026-11-23-1737-consolidation.md"
    ]

    recorded = [json.loads(line) for line in figures.read_text().splitlines()]
    expected_benchmarks = {"consolidation"} | ({"observations"} if backend == "sqlite" else set())
    assert {line["benchmark"] for line in recorded} == expected_benchmarks
    assert {line["backend"] for line in recorded} == {backend}
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    for name in expected_benchmarks:
        first, _, table = between_markers(text, name).partition("\n\n")
        dated = r"\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC — `make bench`, commit [0-9a-f]{7,}"
        assert re.match(dated, first)
        assert f"commit {head}" in first and "quick sizes" in first
        assert f"{os.cpu_count()} cores" in first and "GiB" in first
        header, *rows = table_rows(table)
        assert header == ["backend", "case", "figure", "target", "met"]
        mine = [line for line in recorded if line["benchmark"] == name]
        assert len(rows) == len(mine)
        cases = {(line["backend"], line["case"]) for line in mine}
        assert {(row[0], row[1]) for row in rows} == cases
    throughput = table_rows(between_markers(text, "consolidation"))[1]
    assert re.fullmatch(r"throughput [\d,.]+ msg/s", throughput[2])
    if backend == "sqlite":  # no table yet: appended at the end
        assert text.rstrip().endswith(markers("observations")[1])


def test_it_replaces_only_the_named_tables_and_keeps_each_old_one_once(tmp_path):
    text = "# Results\n\n" + block("search", SEARCH) + "\nBetween.\n\n" + block("mcp", "")

    replaced = replace_tables(text, {"search": "new search", "mcp": "new mcp"}, tmp_path)

    assert replaced == "# Results\n\n" + block("search", "new search") + "\nBetween.\n\n" + block(
        "mcp", "new mcp"
    )
    assert [path.name for path in tmp_path.iterdir()] == ["2026-11-26-search.md"]
    assert SEARCH in (tmp_path / "2026-11-26-search.md").read_text()


def test_two_tables_of_the_same_minute_are_both_kept_and_an_undated_one_is_named_so(tmp_path):
    keep_in_history(tmp_path, "mcp", "2026-11-27 10:00 UTC — first")
    keep_in_history(tmp_path, "mcp", "2026-11-27 10:00 UTC — second")
    keep_in_history(tmp_path, "mcp", "no date here")

    kept = (tmp_path / "2026-11-27-1000-mcp.md").read_text()
    assert "first" in kept and "second" in kept
    assert "no date here" in (tmp_path / "undated-mcp.md").read_text()


def test_the_results_file_has_one_marked_table_for_every_benchmark_the_runner_runs():
    text = (ROOT / "bench" / "RESULTS.md").read_text()

    for script in SCRIPTS:
        begin, end = markers(script.name)
        assert text.count(begin) == 1 and text.count(end) == 1, script.name
        first = between_markers(text, script.name).splitlines()[0]
        assert re.match(r"\d{4}-\d{2}-\d{2}", first), f"{script.name}: {first}"


def test_an_unknown_benchmark_is_refused_by_name(tmp_path):
    command = [sys.executable, str(ROOT / "bench" / "run_all.py"), "--only", "context,nope"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "--only: unknown benchmark(s) nope" in done.stderr


def test_no_bench_script_shadows_an_installed_package():
    """bench/ is put first on sys.path when a script runs (and when these tests import one): a
    script named like an installed package (bench/mcp.py did) hides that package from every
    module imported after it."""
    installed = importlib.metadata.packages_distributions()

    shadowing = [path.stem for path in (ROOT / "bench").glob("*.py") if path.stem in installed]

    assert not shadowing, f"bench scripts named like installed packages: {shadowing}"
