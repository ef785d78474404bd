"""`make bench`'s runner, end to end at the scripts' quick sizes.

bench/run_all.py runs real benchmark scripts in subprocesses; to stay well under a minute this
test runs the two fastest (consolidation and observations, both in-process, no web server) on
the backend the suite runs on, into a temporary results file, and checks the appended section:
the header fields, and one table row per (benchmark, backend, case) the scripts recorded.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
ONLY = ("consolidation", "observations")


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


@pytest.fixture
def backend() -> str:
    return "postgres" if os.environ.get("DATABASE_URL", "").startswith("postgres") else "sqlite"


def test_quick_run_appends_a_dated_table_with_a_row_per_recorded_case(tmp_path, backend):
    output = tmp_path / "RESULTS.md"
    output.write_text("# Benchmark results\n\nEarlier text stays.\n")

    done, figures = run_all(tmp_path, backend, output)

    assert done.returncode == 0, done.stderr[-3000:]
    text = output.read_text()
    assert text.startswith("# Benchmark results\n\nEarlier text stays.\n\n## ")
    section = text.split("\n## ", 1)[1]
    heading = section.splitlines()[0]
    assert re.match(
        r"\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC — `make bench`, commit [0-9a-f]{7,}", heading
    )
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    assert f"- commit: {head}" in section
    machine = re.search(r"^- machine: (.+)$", section, re.M).group(1)
    assert f"{os.cpu_count()} cores" in machine and "GiB" in machine
    assert "quick sizes" in section

    recorded = [json.loads(line) for line in figures.read_text().splitlines()]
    expected_benchmarks = {"consolidation"} | ({"observations"} if backend == "sqlite" else set())
    assert {line["benchmark"] for line in recorded} == expected_benchmarks
    assert {line["backend"] for line in recorded} == {backend}
    header, *rows = table_rows(section)
    assert header == ["benchmark", "backend", "case", "figure", "target", "met"]
    assert len(rows) == len(recorded)
    cases = {(row[0], row[1], row[2]) for row in rows}
    assert cases == {(line["benchmark"], line["backend"], line["case"]) for line in recorded}
    throughput = next(row for row in rows if row[0] == "consolidation")
    assert re.fullmatch(r"throughput [\d,.]+ msg/s", throughput[3])


def test_an_unknown_benchmark_is_refused_by_name(tmp_path):
    command = [sys.executable, str(ROOT / "bench" / "run_all.py"), "--only", "context,nope"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "--only: unknown benchmark(s) nope" in done.stderr
