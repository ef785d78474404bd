"""Moderation in a real browser: counts and similar entries' badges follow each action."""

from playwright.sync_api import expect

from apps.jobs.services import job_run_pending
from apps.memconfig.services import config_update
from tests.conftest import make_actor


def _propose(actor, content) -> str:
    response = actor.post("/api/v1/episodic", {"content": content, "resource_id": "cust-1"})
    assert response.status_code == 201, response.content
    return response.json()["id"]


def test_approving_drops_the_pending_count_and_updates_similar_badges_without_reload(
    operator_login, page, shoot
):
    alice = make_actor("acme", "alice")
    changes = {
        "embedder_model": "builtin-hash",
        "embedder_dimensions": 64,
        "episodic_dedupe_threshold": 1.0,  # keep the look-alikes apart, to moderate both
    }
    config_update(project=alice.agent.project, changes=changes, changed_by="test")
    first = _propose(alice, "Invoices are emailed on the first of the month")
    second = _propose(alice, "Invoices are emailed on the first business day")
    _propose(alice, "The VPN drops every day at 5pm")
    job_run_pending()

    page.goto(f"{operator_login}/console/moderation/")
    expect(page.locator("#pending-count")).to_have_text("3 pending")
    badge = page.locator(f"#entry-{second} .sim-status-{first}")
    page.locator(f"#entry-{second}").scroll_into_view_if_needed()  # its similar entries load
    expect(badge).to_have_text("pending")
    shoot("before")

    page.locator(f"#entry-{first} button:has-text('Approve')").click()

    expect(page.locator(f"#entry-{first}")).to_have_count(0)
    expect(page.locator("#pending-count")).to_have_text("2 pending")
    expect(badge).to_have_text("approved")
    expect(badge).to_have_class("badge approved sim-status-" + first)
    shoot("after")

    page.locator(f"#entry-{second} button:has-text('Reject')").click()

    expect(page.locator("#pending-count")).to_have_text("1 pending")
