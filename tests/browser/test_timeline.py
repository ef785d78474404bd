"""The thread page reads a 300-message tool loop: folded steps, JSON payloads, runs, filters."""

import json
import re

from playwright.sync_api import expect

from tests.browser.tool_loop import RUN_ERROR, tool_loop_thread
from tests.conftest import make_actor

HEIGHT_BOUND = 15_000  # px at 1440 px wide, with all 300 messages loaded


def _open_all(page, url: str) -> None:
    page.goto(url)
    while page.locator("text=Load earlier messages").count():
        count = page.locator(".msg").count()
        page.click("text=Load earlier messages")
        expect(page.locator(".msg")).not_to_have_count(count)


def test_a_300_message_tool_loop_stays_short_with_everything_loaded(operator_login, page, shoot):
    thread = tool_loop_thread(make_actor("acme", "courier"))
    page.set_viewport_size({"width": 1440, "height": 900})

    _open_all(page, f"{operator_login}/console/threads/{thread['id']}/")

    expect(page.locator(".msg")).to_have_count(300)
    # Each call and its result are one step: 145 steps, and 5 requests and 5 endings.
    expect(page.locator(".item.step")).to_have_count(145)
    expect(page.locator(".run-band")).to_have_count(5)
    expect(page.locator(".run-end")).to_have_count(5)
    height = page.evaluate("document.documentElement.scrollHeight")
    shoot("all-loaded")
    assert height < HEIGHT_BOUND, f"the page is {height} px tall"


def test_a_step_opens_to_its_arguments_and_result_as_json(operator_login, page, shoot):
    thread = tool_loop_thread(make_actor("acme", "courier"))
    page.goto(f"{operator_login}/console/threads/{thread['id']}/")

    step = page.locator(".item.step").last
    expect(step.locator(".step-line")).to_contain_text("track_parcel")
    expect(step.locator(".step-line")).to_contain_text("1000 ms")  # from call to result
    expect(step.locator("pre.json").first).not_to_be_visible()
    step.locator(".step-line").click()
    arguments = step.locator(".msg.tool_call pre.json")
    expect(arguments).to_be_visible()
    payload = json.loads(arguments.inner_text())
    assert payload["arguments"] == {"carrier": "DHL", "include_events": True}
    assert '"include_events": true' in arguments.inner_text()
    result = json.loads(step.locator(".msg.tool_result pre.json").first.inner_text())
    assert result["carrier"] == "DHL"
    assert "mono" in arguments.evaluate("e => getComputedStyle(e).fontFamily")
    copy = step.locator(".msg.tool_call [data-copy]")
    copy.click()
    expect(copy).to_have_text(re.compile("Copied|Selected"))
    shoot("step-open")


def test_a_failed_run_shows_its_error_and_the_errors_filter_shows_only_errors(
    operator_login, page, shoot
):
    thread = tool_loop_thread(make_actor("acme", "courier"))
    _open_all(page, f"{operator_login}/console/threads/{thread['id']}/")

    failed = page.locator(".run-band.run-failed")
    expect(failed).to_have_count(1)
    expect(failed.locator(".run-error")).to_have_text(RUN_ERROR)
    expect(failed.locator(".run-error")).to_be_visible()

    page.click("button[data-timeline-filter=error]")
    shown = page.locator(".timeline > li:visible")
    expect(shown.first).to_be_visible()
    classes = shown.evaluate_all("items => items.map((item) => item.className)")
    assert classes and all("is-error" in name for name in classes), classes
    # 4 failing results in each of 5 runs (pairs 3, 10, 17, 24) and the failed run's last word.
    assert len(classes) == 21
    shoot("errors-only")

    page.click("button[data-timeline-filter=all]")
    page.click("button[data-next-error]")
    jumped = page.locator(".item.jumped")
    expect(jumped).to_have_count(1)
    expect(jumped).to_be_in_viewport()
    expect(jumped.locator("pre").first).to_be_visible()

    page.click("button[data-timeline-fold=open]")
    expect(page.locator("details.fold:not([open])")).to_have_count(0)
    page.click("button[data-timeline-fold=close]")
    expect(page.locator("details.fold[open]")).to_have_count(0)


def test_the_kind_filters_show_only_messages_or_only_tool_steps(operator_login, page):
    thread = tool_loop_thread(make_actor("acme", "courier"))
    page.set_viewport_size({"width": 1440, "height": 900})
    _open_all(page, f"{operator_login}/console/threads/{thread['id']}/")
    shown = page.locator(".timeline > li:visible")

    page.click("button[data-timeline-filter=message]")
    expect(page.locator("button[data-timeline-filter=message]")).to_have_attribute(
        "aria-pressed", "true"
    )
    kinds = shown.evaluate_all("items => items.map((item) => item.dataset.kind)")
    # Each run's request and the four answers; the failed run's last word is an error.
    assert kinds == ["message"] * 9, kinds

    page.click("button[data-timeline-filter=tool]")
    kinds = shown.evaluate_all("items => items.map((item) => item.dataset.kind)")
    assert kinds == ["tool"] * 145, set(kinds)
    expect(page.locator(".item.step:visible")).to_have_count(145)

    # The sidebar stays in view while the timeline scrolls.
    sidebar = page.locator(".thread-sidebar")
    assert sidebar.evaluate("e => getComputedStyle(e).position") == "sticky"
    page.mouse.wheel(0, 6000)
    expect(sidebar).to_be_in_viewport()


def test_a_run_in_the_sidebar_links_to_its_place(operator_login, page):
    thread = tool_loop_thread(make_actor("acme", "courier"))
    page.goto(f"{operator_login}/console/threads/{thread['id']}/")

    page.locator("#thread-runs a", has_text="turn 1").click()
    band = page.locator(".run-band", has_text="turn 1")
    expect(band).to_be_in_viewport()
    expect(page.locator("#thread-runs")).to_contain_text(RUN_ERROR)
