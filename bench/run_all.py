"""Run every benchmark on both backends and replace each one's table in RESULTS.md.

Each script hands its headline figures to common.record(), which appends them as JSON lines to
the file $BENCH_RESULTS names; this runner sets it to a scratch file, runs each script once per
backend (a script that runs only on SQLite runs once; bench/consolidation.py gets a scratch
PostgreSQL database created before and dropped after). Then, for each benchmark that recorded
figures, it replaces that benchmark's table in the results file: the table stands between the
lines `<!-- bench NAME: ... -->` and `<!-- end bench NAME -->`, under one line with the date,
the commit (with "+dirty" when the tree has uncommitted changes), the machine (platform, CPU
model, cores, memory) and the sizes, with one row per recorded figure: backend | case | figure |
target | met. The table it replaces goes to the history folder as <date>-<benchmark>.md (the
date of the figures it held), so RESULTS.md holds the current figures only and nothing measured
is lost. A benchmark without a table yet gets one at the end of the file. A script that fails is
named under its table; one that records nothing keeps its previous table, and the runner exits 1.

Run it with `make bench`, or:
    .venv/bin/python bench/run_all.py [--only context,search] [--backend sqlite|postgres|both]
        [--quick] [--output bench/RESULTS.md] [--history bench/history] [--figures FILE.jsonl]
--quick passes each script the small sizes its docstring gives for checking that it works: the
figures then only show that the chain works, the table's line says so, and they go to
bench/results/quick.md (not committed) unless --output names another file.
"""

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from common import PG_SERVER, RESULTS_ENV, ROOT, log, postgres_database

BENCH = Path(__file__).resolve().parent
SCRATCH_DATABASE = "memory_console_bench_run_all"
BACKENDS = ("sqlite", "postgres")


@dataclass(frozen=True)
class Script:
    """A benchmark script, how it is told its backend, and its quick sizes."""

    name: str
    backend_via: str  # "option": --backend X; "database-url": --database-url; "sqlite": only
    quick: tuple[str, ...]


SCRIPTS = [
    # ingest.py gives no quick sizes; these finish in seconds.
    Script("ingest", "option", ("--seed", "1000", "--singles", "50", "--batches", "2")),
    Script("search", "option", ("--skip-large", "--turns", "20", "--queries", "10")),
    Script(
        "context",
        "option",
        ("--messages", "500", "--chunks", "2000", "--entries", "100", "--observations", "50")
        + ("--queries", "10"),
    ),
    # In-process on SQLite only; its default 300 messages take seconds (60 write no observation).
    Script("observations", "sqlite", ()),
    Script("retrieval", "option", ("--quick",)),
    Script("context_recall", "option", ("--quick", "--no-tune")),
    Script("fusion_by_kind", "option", ("--quick",)),
    Script("ingest_documents", "option", ("--pages", "5", "--markdown", "10")),
    Script("console_render", "option", ("--messages", "60", "--renders", "3")),
    Script("episodic", "option", ("--resources", "2", "--questions", "4", "--turns", "3")),
    Script("consolidation", "database-url", ("--threads", "2", "--messages", "40")),
    Script("mcp_latency", "option", ("--messages", "50", "--entries", "10", "--queries", "5")),
    Script("memory_fidelity", "option", ("--quick",)),
]


def parse_args() -> argparse.Namespace:
    """Read the command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    names = [script.name for script in SCRIPTS]
    parser.add_argument("--only", default="", help=f"comma-separated subset of: {','.join(names)}")
    parser.add_argument("--backend", choices=[*BACKENDS, "both"], default="both")
    parser.add_argument("--quick", action="store_true", help="the scripts' small sizes")
    parser.add_argument(
        "--output", type=Path, help="default RESULTS.md; with --quick bench/results/quick.md"
    )
    parser.add_argument(
        "--history", type=Path, help="where replaced tables go (default: history/ by --output)"
    )
    parser.add_argument("--figures", type=Path, help="also keep the recorded JSON lines here")
    args = parser.parse_args()
    chosen = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = sorted(set(chosen) - set(names))
    if unknown:
        parser.error(f"--only: unknown benchmark(s) {', '.join(unknown)}; choose from {names}")
    args.scripts = [script for script in SCRIPTS if not chosen or script.name in chosen]
    args.backends = BACKENDS if args.backend == "both" else (args.backend,)
    if args.output is None:
        # Quick figures only show that the chain works: they never replace measured ones.
        args.output = BENCH / "results" / "quick.md" if args.quick else BENCH / "RESULTS.md"
        args.output.parent.mkdir(exist_ok=True)
    if args.history is None:
        args.history = args.output.parent / "history"
    return args


def run_script(script: Script, backend: str, quick: bool, results: Path) -> int:
    """Run one script on one backend, its figures recorded into results; return its exit code."""
    command = [sys.executable, str(BENCH / f"{script.name}.py"), *(script.quick if quick else ())]
    env = {**os.environ, RESULTS_ENV: str(results)}
    log(f"run_all: {script.name} on {backend}")
    if script.backend_via == "database-url" and backend == "postgres":
        with postgres_database(SCRATCH_DATABASE):
            command += ["--database-url", f"{PG_SERVER}/{SCRATCH_DATABASE}"]
            return subprocess.run(command, cwd=ROOT, env=env).returncode
    if script.backend_via == "option":
        command += ["--backend", backend]
    return subprocess.run(command, cwd=ROOT, env=env).returncode


def machine() -> str:
    """Return the platform, CPU model, core count and memory of this machine."""
    cpu = "unknown CPU"
    memory = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory = f", {int(line.split()[1]) / 2**20:.0f} GiB"
                break
    except OSError:
        pass  # not Linux: the platform string still says what it is
    return f"{platform.platform()}, {cpu}, {os.cpu_count()} cores{memory}"


def commit() -> str:
    """Return the short commit hash, with "+dirty" when the tree has uncommitted changes."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()

    return git("rev-parse", "--short", "HEAD") + ("+dirty" if git("status", "--porcelain") else "")


def number(value: float) -> str:
    """Return a figure with sensible precision: whole numbers whole, fractions to 3 places."""
    digits = 0 if float(value).is_integer() or abs(value) >= 100 else 1 if abs(value) >= 1 else 3
    return f"{value:,.{digits}f}"


def figure(line: dict) -> str:
    """Return a recorded figure as text: metric, value, unit."""
    return " ".join(part for part in (line["metric"], number(line["value"]), line["unit"]) if part)


def target(line: dict) -> str:
    """Return a recorded target as text, e.g. "<= 15 ms", or "" when the figure has none."""
    if not line["target"]:
        return ""
    op, bound = line["target"]
    return " ".join(part for part in (op, number(bound), line["unit"]) if part)


def markers(name: str) -> tuple[str, str]:
    """Return the lines that open and close the table of benchmark name in RESULTS.md."""
    return (
        f"<!-- bench {name}: the table below is replaced by bench/run_all.py -->",
        f"<!-- end bench {name} -->",
    )


def table(lines: list[dict], failures: list[str], mode: str, seconds: float) -> str:
    """Return one benchmark's table: its one line of facts, the rows, then its failures."""
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    backends = ", ".join(dict.fromkeys(line["backend"] for line in lines))
    out = [
        f"{now} — `make bench`, commit {commit()}; machine: {machine()}; {mode}; "
        f"{backends}; {seconds:.0f} s",
        "",
        "| backend | case | figure | target | met |",
        "|---|---|---|---|---|",
    ]
    for line in lines:
        met = {True: "yes", False: "**no**", None: ""}[line["met"]]
        cells = [line["backend"], line["case"], figure(line), target(line), met]
        out.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    out += ([""] + [f"Failed: {failure}." for failure in failures]) if failures else []
    return "\n".join(out)


def keep_in_history(folder: Path, name: str, old: str) -> Path:
    """Write a replaced table to folder as <date>-<name>.md, dated by its first line."""
    found = re.match(r"(\d{4}-\d{2}-\d{2})(?: (\d{2}):(\d{2}))?", old)
    stamp = "undated"
    if found:
        stamp = found.group(1) + (f"-{found.group(2)}{found.group(3)}" if found.group(2) else "")
    path = folder / f"{stamp}-{name}.md"
    folder.mkdir(parents=True, exist_ok=True)
    if path.exists():  # two tables of one benchmark from the same minute: keep both
        path.write_text(path.read_text().rstrip("\n") + "\n\n" + old + "\n")
    else:
        path.write_text(f"# {name}, {stamp}\n\nReplaced in RESULTS.md by a later run.\n\n{old}\n")
    return path


def replace_tables(text: str, tables: dict[str, str], history: Path) -> str:
    """Return text with each benchmark's table replaced; the replaced ones go to history."""
    for name, body in tables.items():
        begin, end = markers(name)
        if begin in text and end in text.split(begin, 1)[1]:
            head, rest = text.split(begin, 1)
            old, tail = rest.split(end, 1)
            if old.strip("\n"):
                keep_in_history(history, name, old.strip("\n"))
            text = f"{head}{begin}\n{body}\n{end}{tail}"
        else:
            text = text.rstrip("\n") + ("\n\n" if text.strip() else "")
            text += f"## {name}\n\n{begin}\n{body}\n{end}\n"
    return text


def main() -> None:
    """Run the chosen scripts on the chosen backends and replace their tables."""
    args = parse_args()
    failures: dict[str, list[str]] = {}
    seconds: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="mc-bench-run-all-") as scratch:
        results = Path(scratch) / "figures.jsonl"
        results.touch()
        for script in args.scripts:
            started = time.monotonic()
            backends = args.backends
            if script.backend_via == "sqlite":
                backends = [backend for backend in backends if backend == "sqlite"]
            for backend in backends:
                before = results.stat().st_size
                code = run_script(script, backend, args.quick, results)
                if code != 0:
                    failures.setdefault(script.name, []).append(f"{backend} (exit {code})")
                elif results.stat().st_size == before:  # e.g. a child process that failed
                    failures.setdefault(script.name, []).append(f"{backend} (recorded no figures)")
            seconds[script.name] = time.monotonic() - started
        recorded = results.read_text()
    if args.figures:
        args.figures.write_text(recorded)
    lines = [json.loads(line) for line in recorded.splitlines() if line]
    mode = "quick sizes (checks the chain; not figures)" if args.quick else "full sizes"
    tables = {}
    for script in args.scripts:
        mine = [line for line in lines if line["benchmark"] == script.name]
        named = [f"{script.name} on {failure}" for failure in failures.get(script.name, [])]
        if mine:
            tables[script.name] = table(mine, named, mode, seconds[script.name])
    existing = args.output.read_text() if args.output.exists() else ""
    args.output.write_text(replace_tables(existing, tables, args.history))
    log(f"run_all: {len(lines)} figures in {len(tables)} tables of {args.output}")
    for name, failed in failures.items():
        kept = "" if name in tables else "; its previous table stays"
        log(f"run_all: {name} failed on {', '.join(failed)}{kept}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
