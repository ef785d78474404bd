"""An operator opens a thread's observation band and the context the agent was given."""

import re

from playwright.sync_api import expect

from apps.jobs.services import job_run_pending
from apps.memconfig.services import config_update
from tests.conftest import make_actor

SCRIPT = "<script>alert('x')</script>"


def _observed_thread():
    alice = make_actor("acme", "alice")
    config_update(
        agent=alice.agent,
        changes={"observer_message_tokens": 200, "recent_window": 2},
        changed_by="test",
    )
    thread = alice.new_thread(title="Router trouble", resource_id="cust-9")
    alice.append(
        thread["id"],
        *[
            {"role": "user", "content": f"Ticket {n}: router XR-{n} reboots {SCRIPT} " + "ok " * 15}
            for n in range(1, 13)
        ],
    )
    job_run_pending()
    given = alice.post(f"/api/v1/threads/{thread['id']}/context", {"query": "router"}).json()
    alice.append(thread["id"], {"role": "assistant", "content": "Replacing the router."})
    return thread, given


def test_an_operator_reads_an_observation_band_and_what_the_agent_saw(operator_login, page, shoot):
    thread, given = _observed_thread()

    page.goto(f"{operator_login}/console/threads/{thread['id']}/")
    band = page.locator(".memory-band").first
    expect(band.locator("summary")).to_contain_text("observed #1–#")
    expect(band.locator(".memory-text")).to_be_hidden()
    band.locator("summary").click()
    expect(band.locator(".memory-text")).to_contain_text(f"router XR-1 reboots {SCRIPT}")
    expect(page.locator("#memory-gauges meter")).to_have_count(2)
    expect(page.locator("#memory-gauges")).to_contain_text("/ 200 tokens")
    shoot("thread")

    page.click("#m-13 >> text=context given before this turn")
    expect(page.locator("h1")).to_have_text("What the agent saw")
    expect(page.locator("#block-observations pre")).to_contain_text("User: Ticket 1: router XR-1")
    expect(page.locator("#block-recent")).to_contain_text("message #12")
    expect(page.locator("#context-budget svg.budget-bar")).to_be_visible()
    expect(page.locator("#context-budget rect.budget-used")).not_to_have_count(0)
    page.click("#context-budget summary")
    expect(page.locator("#sent-system-prompt")).to_contain_text("<observations>")
    page.locator("#context-budget [data-copy]").first.click()
    expect(page.locator("#context-budget [data-copy]").first).to_have_text(
        re.compile("Copied|Selected")
    )
    shoot("context")
    page.click("#block-recent .context-range summary")  # the range opens to its messages
    page.click("#block-recent >> text=message #12")
    expect(page.locator("#m-12")).to_have_class(re.compile(r"\bhighlight\b"))
    expect(page.locator("#m-12")).to_be_in_viewport()
