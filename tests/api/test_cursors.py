"""Every cursor-paginated list takes back the cursors it issued and refuses any other with a 400."""

import base64

import pytest

from apps.jobs.services import job_run_pending

RUNBOOK = b"# Runbook\n\n## Restarts\n\nRestart the worker.\n\n## Backups\n\nBackups run nightly.\n"

# Each list, its path with {thread}, {run} and {document} filled in by the fixture below.
LISTS = [
    "/api/v1/threads",
    "/api/v1/episodic",
    "/api/v1/knowledge-bases",
    "/api/v1/knowledge-bases/ops/documents",
    "/api/v1/documents/{document}/chunks",  # ordered by an integer id, the others by a UUID
    "/api/v1/threads/{thread}/iterations",
    "/api/v1/runs/{run}/checkpoints",
]


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


FORGED = [
    pytest.param("cD14", id="p=x"),
    pytest.param(b64("p="), id="blank-position"),
    pytest.param(b64("p=1.5"), id="position-neither-uuid-nor-integer"),
    pytest.param(b64("p=99999999999999999999999"), id="position-beyond-any-integer-column"),
    pytest.param(b64("p=0190d0c4-0000-7000-8000-00000000000g"), id="uuid-with-a-non-hex-digit"),
    pytest.param(b64("p=\x00"), id="nul-position"),
    pytest.param(b64("o=999999"), id="offset-beyond-any-page"),
    pytest.param(b64("o=-1"), id="negative-offset"),
    pytest.param(b64("r=junk"), id="reverse-flag-junk"),
    pytest.param(b64("r=1&p=x"), id="reverse-with-bad-position"),
    pytest.param("not base64!", id="garbage"),
    pytest.param("cD14=====", id="bad-padding"),
    pytest.param("w6k=", id="non-ascii-query"),
    # base64 decoding that skips what is not base64 read these as the first page.
    pytest.param("!!!", id="no-base64-at-all"),
    pytest.param("cD14!", id="base64-with-a-stray-character"),
    pytest.param("cD 14", id="base64-with-a-space"),
    pytest.param(b64("x=1"), id="unknown-part"),
    pytest.param(b64("junk"), id="part-without-a-value"),
    pytest.param(b64("o=1&o=2"), id="part-twice"),
    pytest.param(b64("r=5"), id="reverse-flag-not-1"),
    pytest.param(b64("o=1&&r=1"), id="empty-part"),
    # Lists ordered by a time: a position before year 1 or after 9999 in UTC, or without a zone.
    pytest.param(b64("p=0001-01-01T00:00:00+01:00"), id="time-before-the-calendar-in-utc"),
    pytest.param(b64("p=9999-12-31T23:59:59.999999-01:00"), id="time-after-the-calendar-in-utc"),
    pytest.param(b64("p=2026-01-01T00:00:00"), id="time-without-a-zone"),
]


@pytest.fixture
def paths(alice) -> list[str]:
    """Two items in each of alice's cursor-paginated lists; return the lists' paths."""
    alice.post("/api/v1/knowledge-bases", {"slug": "ops"})
    alice.post("/api/v1/knowledge-bases", {"slug": "dev"})
    thread = alice.new_thread(resource_id="cust-1")["id"]
    alice.new_thread()
    run = alice.post(f"/api/v1/threads/{thread}/runs", {}).json()["id"]
    for content in ("The VPN drops daily at 5pm.", "Invoices go out on the first Monday."):
        made = alice.post("/api/v1/episodic", {"content": content, "resource_id": "cust-1"})
        assert made.status_code == 201, made.content
    for attempt in range(2):
        alice.post(f"/api/v1/threads/{thread}/iterations", {"task": "t", "outcome": "failed"})
        alice.post(f"/api/v1/runs/{run}/checkpoints", {"state": {"attempt": attempt}})
    document = alice.upload(
        "/api/v1/knowledge-bases/ops/documents", "runbook.md", RUNBOOK, title="Runbook"
    ).json()["id"]
    alice.post("/api/v1/knowledge-bases/ops/documents", {"title": "Parking", "text": "Lot C."})
    job_run_pending()
    ids = {"thread": thread, "run": run, "document": document}
    return [path.format(**ids) for path in LISTS]


@pytest.mark.parametrize("cursor", FORGED)
def test_it_refuses_a_cursor_it_did_not_issue_naming_the_cursor(alice, paths, cursor):
    for path in paths:
        response = alice.get(path, {"cursor": cursor})

        assert response.status_code == 400, (path, response.content)
        error = response.json()["error"]
        assert error["code"] == "invalid"
        assert error["message"].startswith("cursor: Invalid cursor")
        assert list(error["details"]) == ["cursor"]


def test_it_follows_its_own_next_and_previous_links_on_every_list(alice, paths):
    for path in paths:
        first = alice.get(path, {"limit": 1}).json()
        second = alice.client.get(first["next"])
        back = alice.client.get(second.json()["previous"])

        assert second.status_code == 200, (path, second.content)
        assert second.json()["results"][0]["id"] != first["results"][0]["id"]
        assert back.json()["results"] == first["results"], path
