"""In Chromium: the context page as a picture (bar, raw prompt, ranges, cuts, two contexts
compared), and a moderator who follows evidence, sees counts move and decides a filtered queue."""

import re

from django.contrib.auth.models import Group, User
from playwright.sync_api import expect

from apps.memconfig.services import config_update
from tests.conftest import make_actor


def _contexts_of_a_long_thread(alice) -> tuple[dict, list[str]]:
    config_update(
        agent=alice.agent,
        changes={"context_strategy": "none", "recent_window": 300},
        changed_by="test",
    )
    thread = alice.new_thread(title="Long loop")
    alice.append(thread["id"], *[{"role": "user", "content": f"Step {n}"} for n in range(1, 41)])
    first = alice.post(f"/api/v1/threads/{thread['id']}/context", {}).json()["context_id"]
    alice.append(thread["id"], *[{"role": "user", "content": f"Step {n}"} for n in range(41, 61)])
    # A budget too small for the window: the oldest messages are cut.
    second = alice.post(f"/api/v1/threads/{thread['id']}/context", {"max_tokens": 200}).json()[
        "context_id"
    ]
    return thread, [first, second]


def test_the_context_page_draws_the_budget_collapses_blocks_and_compares_two_picked(
    operator_login, page, shoot
):
    alice = make_actor("acme", "alice")
    thread, (first, second) = _contexts_of_a_long_thread(alice)

    page.goto(f"{operator_login}/console/contexts/{first}/")
    expect(page.locator("#context-budget svg.budget-bar rect.budget-used")).not_to_have_count(0)
    page.click("#context-budget summary")
    expect(page.locator("#sent-messages")).to_contain_text('"content": "Step 40"')
    recent = page.locator("#block-recent")
    expect(recent.locator(".context-range summary")).to_have_text(re.compile(r"#1–#40 recent"))
    expect(recent.locator("text=message #7")).to_be_hidden()  # items wait until asked for
    recent.locator(".context-range summary").click()
    expect(recent.locator("text=message #7")).to_be_visible()
    shoot("ranges")

    page.goto(f"{operator_login}/console/threads/{thread['id']}/contexts/")
    page.select_option("select[name=a]", first)
    page.select_option("select[name=b]", second)
    page.click("#compare-contexts button:has-text('Compare')")
    page.wait_for_url(re.compile(rf"/console/contexts/{second}/\?against={first}"))
    expect(page.locator("#delta-recent")).to_contain_text("40 →")
    expect(page.locator("#diff-recent .diff.entered")).to_be_hidden()
    page.click("#diff-recent summary")
    expect(page.locator("#diff-recent .diff.entered")).to_contain_text("message #60")
    expect(page.locator("#left-out-recent")).to_contain_text("Left out by the budget")
    shoot("compared")


def _moderator(live_server, page) -> None:
    user = User.objects.create_user(username="mod", password="correct horse battery")
    # A transactional test's flush drops the groups the migrations made.
    user.groups.add(Group.objects.get_or_create(name="moderator")[0])
    page.goto(f"{live_server.url}/console/login/")
    page.fill("input[name=username]", "mod")
    page.fill("input[name=password]", "correct horse battery")
    page.click("button[type=submit]")


def test_a_moderator_follows_the_evidence_sees_counts_move_and_approves_a_filtered_queue(
    live_server, page, console_errors, transactional_db, shoot
):
    alice = make_actor("acme", "alice")
    thread = alice.new_thread(resource_id="cust-1")
    said = [{"role": "user", "content": f"Small talk {n}."} for n in range(1, 16)]
    said[7] = {"role": "user", "content": "Please ship everything to Lindenstrasse 5, Berlin."}
    stored = alice.append(thread["id"], *said)
    quoted = alice.post(
        "/api/v1/episodic",
        {
            "content": "Ships to Lindenstrasse 5, Berlin",
            "resource_id": "cust-1",
            "source": "user_assertion",
            "evidence": "Lindenstrasse 5, Berlin",
            "message_id": stored[7]["id"],
        },
    ).json()["id"]
    for n in range(4):
        alice.post("/api/v1/episodic", {"content": f"Account fact {n}", "resource_id": "cust-1"})
    _moderator(live_server, page)

    page.goto(f"{live_server.url}/console/moderation/")
    expect(page.locator("#queue-count")).to_have_text("5 entries pending")
    page.locator(f"#entry-{quoted} >> text=the conversation around it").click()
    expect(page.locator("h1")).to_have_text("The conversation around the evidence")
    expect(page.locator("#conversation mark")).to_have_text("Lindenstrasse 5, Berlin")
    expect(page.locator("#conversation li")).to_have_count(15)
    shoot("conversation")
    # The thread page itself stays an operator's (asked with the moderator's session cookie).
    assert page.request.get(f"{live_server.url}/console/threads/{thread['id']}/").status == 403

    page.goto(f"{live_server.url}/console/moderation/")
    page.locator(f"#entry-{quoted} button:has-text('Approve')").click()
    expect(page.locator("#queue-count")).to_have_text("4 entries pending")
    expect(page.locator("#pending-count")).to_have_text("4 pending")

    page.select_option("select[name=source]", "api")
    page.click("form.filters button:has-text('Filter')")
    expect(page.locator("#queue-count")).to_have_text("4 entries pending")
    page.once("dialog", lambda dialog: dialog.accept())
    page.click(".bulk-matching button:has-text('Approve all 4')")
    expect(page.locator("#messages")).to_contain_text("Approved 4 entries matching the filters.")
    expect(page.locator("#pending-count")).to_have_text("0 pending")
    shoot("approved")
