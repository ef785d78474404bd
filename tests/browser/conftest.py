"""Browser tests: Playwright drives Debian's Chromium (no browser download) against the live server.

Every page a test opens is checked for JavaScript errors, and each test can save screenshots
under test-artifacts/screenshots/.
"""

import os
import shutil
import threading
from pathlib import Path

import pytest
from django.contrib.auth.models import User

from apps.jobs.services import job_run_pending

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
# axe-core, pinned and kept in the repository with its licence (MPL-2.0), so the accessibility
# tests need no download: see tests/browser/vendor/README.md.
AXE_SCRIPT = Path(__file__).resolve().parent / "vendor" / "axe-core-4.14.1" / "axe.min.js"
AXE_IMPACTS_REFUSED = ("serious", "critical")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"

# Playwright's sync API keeps an event loop in this thread; Django's ORM refuses to run where an
# event loop runs unless told that this is safe, which it is here (one thread, no async code).
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

if not shutil.which(CHROMIUM):
    pytest.skip(
        f"{CHROMIUM} is missing: `make test` installs Debian's chromium when run as root",
        allow_module_level=True,
    )


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    return {
        **browser_type_launch_args,
        "executable_path": CHROMIUM,
        "headless": True,
        "args": [
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ],
    }


@pytest.fixture
def console_errors(page):
    """Collect JavaScript errors of every page; the test fails if any occurred."""
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield errors
    assert errors == [], f"JavaScript errors: {errors}"


@pytest.fixture
def shoot(page, request):
    """Save a full-page screenshot named after the test and a label."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)

    def screenshot(label: str) -> Path:
        path = ARTIFACTS / f"{request.node.name}-{label}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return screenshot


@pytest.fixture
def operator_login(live_server, page, console_errors, transactional_db):
    """Log in through the login form as a superuser (all roles); return the base URL."""
    User.objects.create_superuser(username="ops", password="correct horse battery")
    page.goto(f"{live_server.url}/console/")
    page.fill("input[name=username]", "ops")
    page.fill("input[name=password]", "correct horse battery")
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/console/")
    return live_server.url


@pytest.fixture
def worker(transactional_db):
    """Run background jobs in a thread while the test drives the browser."""
    stop = threading.Event()

    def loop():
        from django.db import connection

        while not stop.is_set():
            job_run_pending()
            stop.wait(0.2)
        connection.close()

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    yield
    stop.set()
    thread.join(timeout=30)


@pytest.fixture
def axe(page):
    """Run axe-core on the page as it is now; return its serious and critical violations.

    The script is added before each document loads (an init script is not subject to the
    console's content security policy, which refuses inline scripts), and axe runs the WCAG 2.x
    A and AA rules and its best practices. Each violation: rule id, impact, help and up to five
    of its nodes with axe's summary of what fails.
    """
    page.add_init_script(path=str(AXE_SCRIPT))

    def violations() -> list[dict]:
        return page.evaluate(
            """async (impacts) => {
              const result = await axe.run(document, {resultTypes: ["violations"]});
              return result.violations
                .filter((rule) => impacts.includes(rule.impact))
                .map((rule) => ({
                  id: rule.id,
                  impact: rule.impact,
                  help: rule.help,
                  nodes: rule.nodes.slice(0, 5).map(
                    (node) => `${node.target.join(" ")}: ${node.failureSummary}`),
                }));
            }""",
            list(AXE_IMPACTS_REFUSED),
        )

    return violations
