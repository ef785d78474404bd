"""The import contract of ARCHITECTURE §10 holds, and breaking it is caught.

The contract lives in pyproject.toml ([tool.importlinter]); `make lint` runs the same check.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
CONTRACTS = 5


def _lint_imports(project: Path) -> subprocess.CompletedProcess:
    """Run lint-imports on the project at this path with its pyproject.toml, without a cache."""
    return subprocess.run(
        [LINT_IMPORTS, "--config", "pyproject.toml", "--no-cache", "--no-logo"],
        cwd=project,
        env={**os.environ, "COLUMNS": "200"},  # rich wraps its report at the terminal's width
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def copy(tmp_path) -> Path:
    """Return a scratch copy of the packages the contract covers, to break on purpose."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for package in ("apps", "memory_console"):
        shutil.copytree(ROOT / package, tmp_path / package, ignore=ignore)
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    return tmp_path


def test_the_apps_keep_their_layers():
    result = _lint_imports(ROOT)

    assert result.returncode == 0, result.stdout + result.stderr
    assert f"Contracts: {CONTRACTS} kept, 0 broken." in result.stdout


def test_an_untouched_copy_keeps_them_too(copy):
    # The cases below differ from this one only by the import they add.
    result = _lint_imports(copy)

    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    "module, source, says",
    [
        (  # upward, hidden in a function
            "apps/memconfig/leak.py",
            "def enqueue():\n    from apps.search.vectors import vectors_sync_enqueue\n",
            "apps.memconfig is not allowed to import apps.search",
        ),
        (  # the bottom layer reaching an area
            "apps/core/leak.py",
            "from apps.tenancy import selectors\n",
            "apps.core is not allowed to import apps.tenancy",
        ),
        (  # siblings of one layer
            "apps/knowledge/leak.py",
            "from apps.episodic import services\n",
            "apps.knowledge is not allowed to import apps.episodic",
        ),
        (  # an app reading the wiring instead of django.conf
            "apps/core/leak.py",
            "from memory_console import settings\n",
            "apps is not allowed to import memory_console",
        ),
        (  # a vendor SDK outside providers, even inside a function
            "apps/knowledge/leak.py",
            "def embed():\n    import openai\n",
            "- apps.knowledge.leak -> openai",
        ),
        (  # a search backend from outside the search app
            "apps/context/leak.py",
            "from apps.search.backends import backend\n",
            "- apps.context.leak -> apps.search.backends",
        ),
        (  # a backend's own module, from an app allowed to import search itself
            "apps/threads/leak.py",
            "from apps.search.backends.sqlite import lexical_candidates\n",
            "- apps.threads.leak -> apps.search.backends.sqlite",
        ),
        (  # the API searching past the retrieval facade
            "apps/api/v1/leak.py",
            "from apps.search.selectors import search_for_agent\n",
            "apps.api is not allowed to import apps.search.selectors",
        ),
        (  # a new app that has not chosen its layer
            "apps/newarea/__init__.py",
            "",
            "The following modules are not listed as layers:\n\n- apps.newarea",
        ),
    ],
)
def test_it_catches_an_import_that_breaks_the_contract(copy, module, source, says):
    path = copy / module
    path.parent.mkdir(exist_ok=True)
    path.write_text(source)

    result = _lint_imports(copy)

    assert result.returncode == 1, result.stdout + result.stderr
    assert f"Contracts: {CONTRACTS} kept" not in result.stdout
    assert says in result.stdout
