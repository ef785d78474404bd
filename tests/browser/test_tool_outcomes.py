"""The Errors filter on a loop logged as examples/agent_loop.py logs it: its failures, only them."""

from playwright.sync_api import expect

from tests.conftest import make_actor
from tests.threads.agent_loop_log import FAILURES, agent_loop_thread


def test_the_errors_filter_shows_every_failing_result_of_an_agent_loop(operator_login, page, shoot):
    thread = agent_loop_thread(make_actor("acme", "refunds"), title="Refund loop")
    page.goto(f"{operator_login}/console/threads/{thread['id']}/")
    expect(page.locator(".item.step")).to_have_count(36)

    page.click("button[data-timeline-filter=error]")

    shown = page.locator(".timeline > li:visible")
    expect(shown).to_have_count(FAILURES)
    classes = shown.evaluate_all("items => items.map((item) => item.className)")
    assert all("is-error" in name for name in classes), classes
    badges = page.locator(".timeline > li:visible .step-line .badge")
    assert badges.all_inner_texts() == ["error"] * FAILURES
    shoot("errors-only")

    page.click("button[data-timeline-filter=all]")
    page.click("button[data-next-error]")
    expect(page.locator("[data-timeline-status]")).to_have_text(f"Error 1 of {FAILURES} loaded.")
    expect(page.locator(".item.jumped")).to_be_in_viewport()

    page.goto(f"{operator_login}/console/threads/")
    row = page.locator("tr", has=page.locator("a", has_text="Refund loop"))
    expect(row.locator(".error-count")).to_have_text(str(FAILURES))
