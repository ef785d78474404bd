"""The covered modules type-check, and a type error in one of them is caught.

The covered modules and the settings are in pyproject.toml ([tool.mypy]); `make lint` runs the
same check. (Marked slow: ~50 s more when no cache of an earlier run is there.)
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MYPY = Path(sys.executable).with_name("mypy")


def _mypy(project: Path, cache: Path) -> subprocess.CompletedProcess:
    """Run mypy on the project at this path with its pyproject.toml."""
    return subprocess.run(
        [MYPY, "--cache-dir", str(cache), "--no-error-summary", "--no-pretty"],
        cwd=project,
        env={**os.environ, "PYTHONPATH": str(project)},
        capture_output=True,
        text=True,
        timeout=600,
    )


# Each run reads the stubs of Django, DRF and the standard library: ~50 s without a cache, a
# few seconds with one. The project's own cache (the one `make lint` keeps) serves the first
# test, and a copy of it each broken copy.
pytestmark = pytest.mark.slow
CACHE = ROOT / ".mypy_cache"


def test_the_covered_modules_type_check():
    result = _mypy(ROOT, CACHE)

    assert result.returncode == 0, result.stdout + result.stderr


@pytest.fixture
def copy(tmp_path) -> Path:
    """Return a scratch copy of what mypy reads (the packages and the settings), to break."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for package in ("apps", "memory_console"):
        shutil.copytree(ROOT / package, tmp_path / package, ignore=ignore)
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    if CACHE.exists():
        shutil.copytree(CACHE, tmp_path / ".mypy_cache")
    return tmp_path


@pytest.mark.parametrize(
    "module, source, says",
    [
        (  # the search read path: a hit's seq may be None
            "apps/search/fusion.py",
            "def _broken(seq: int | None) -> int:\n    return seq + 1\n",
            'Unsupported operand types for + ("None" and "int")',
        ),
        (  # the search answer's contract (REST and MCP)
            "apps/search/results.py",
            "def _broken() -> SearchResult:\n    return SearchResult(type='message')\n",
            'Missing named argument "content" for "SearchResult"',
        ),
    ],
)
def test_it_catches_a_type_error_in_a_covered_module(copy, module, source, says):
    path = copy / module
    path.write_text(path.read_text() + "\n\n" + source)

    result = _mypy(copy, copy / ".mypy_cache")

    assert result.returncode == 1, result.stdout + result.stderr
    assert f"{module}:" in result.stdout and says in result.stdout, result.stdout
