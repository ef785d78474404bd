"""An admin who is not staff, a failed run at the top, Next error, a curator's search."""

import re

from django.contrib.auth.models import Group, User
from playwright.sync_api import expect

from tests.browser.tool_loop import tool_loop_thread
from tests.conftest import make_actor

LAST_ERROR = "the carrier's API is down: 502 Bad Gateway"


def _login(live_server, page, username: str) -> None:
    page.goto(f"{live_server.url}/console/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", "correct horse battery")
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/console/")


def test_an_admin_role_user_reaches_neither_django_s_admin_nor_is_superuser(
    live_server, page, console_errors, transactional_db, shoot
):
    ana = User.objects.create_user(username="ana", password="correct horse battery")
    ana.groups.add(Group.objects.get_or_create(name="admin")[0])
    User.objects.create_user(username="sam", password="correct horse battery")
    _login(live_server, page, "ana")

    expect(page.locator("nav")).not_to_contain_text("Django admin")
    page.click("nav >> text=Users")
    row = page.locator("#users tr", has_text="sam")
    expect(row.locator("input[name=roles]")).to_have_count(4)
    expect(page.locator("input[name=is_superuser], input[name=is_staff]")).to_have_count(0)
    row.locator("input[value=operator]").check()
    # A forged field rides along with the form: the page reads only roles.
    row.locator("form").evaluate(
        """form => { for (const name of ["is_superuser", "is_staff"]) {
             const input = document.createElement("input");
             input.type = "hidden"; input.name = name; input.value = "on"; form.append(input);
           } }"""
    )
    row.locator("button[type=submit]").click()
    expect(page.locator(".flash")).to_contain_text("sam now has the roles: operator.")
    shoot("users")
    sam = User.objects.get(username="sam")
    assert not sam.is_superuser and not sam.is_staff
    assert list(sam.groups.values_list("name", flat=True)) == ["operator"]

    # Django's admin pages name no icon: Chromium's own request for one is not the page's error.
    page.route("**/favicon.ico", lambda route: route.fulfill(status=204))
    for url in ("/admin/", f"/admin/auth/user/{sam.pk}/change/"):
        page.goto(f"{live_server.url}{url}")
        expect(page).to_have_url(re.compile(r"/admin/login/"))
        expect(page.locator("body")).to_contain_text("not authorized")
        expect(page.locator("input[name=is_superuser]")).to_have_count(0)
    shoot("admin-refused")
    page.fill("input[name=username]", "ana")
    page.fill("input[name=password]", "correct horse battery")
    page.click("input[type=submit]")
    expect(page.locator(".errornote", has_text="staff account")).to_be_visible()


def _failed_loop():
    """The 300-message tool loop, then a last run that fails after a tool error."""
    alice = make_actor("acme", "courier")
    thread = tool_loop_thread(alice)
    run = alice.post(f"/api/v1/threads/{thread['id']}/runs", {"name": "turn 6"}).json()
    alice.append(
        thread["id"],
        {"role": "user", "content": "And parcel 4500?", "run_id": run["id"]},
        {
            "role": "assistant",
            "kind": "tool_call",
            "name": "track_parcel",
            "payload": {"id": "call_last", "arguments": "{}"},
            "run_id": run["id"],
        },
        {
            "role": "tool",
            "kind": "tool_result",
            "name": "track_parcel",
            "content": '{"status": 502, "error": "Bad Gateway"}',
            "payload": {"tool_call_id": "call_last"},
            "run_id": run["id"],
        },
    )
    finish = {"status": "failed", "error": LAST_ERROR}
    assert alice.post(f"/api/v1/runs/{run['id']}/finish", finish).status_code == 200
    return thread


def test_a_failed_run_s_error_is_inside_the_first_viewport(operator_login, page, shoot):
    thread = _failed_loop()
    for width, height in ((1280, 800), (1024, 768)):
        page.set_viewport_size({"width": width, "height": height})
        page.goto(f"{operator_login}/console/threads/{thread['id']}/")

        banner = page.locator("#run-status.run-failed")
        expect(banner).to_contain_text("turn 6")
        expect(banner.locator(".badge.failed")).to_have_text("failed")
        error = banner.locator("pre.run-error")
        expect(error).to_have_text(LAST_ERROR)
        box = error.bounding_box()
        assert box["y"] >= 0 and box["y"] + box["height"] <= height, (width, box)
        shoot(f"banner-{width}")


def test_next_error_visits_every_error_of_the_loop_in_order(operator_login, page, shoot):
    thread = _failed_loop()
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{operator_login}/console/threads/{thread['id']}/")
    while page.locator("text=Load earlier messages").count():
        count = page.locator(".msg").count()
        page.click("text=Load earlier messages")
        expect(page.locator(".msg")).not_to_have_count(count)
    errors = page.locator("#timeline .item.is-error")
    # 4 failing results in each of 5 runs, the failed run's last word, and turn 6's result.
    total = errors.count()
    assert total == 22
    ids = errors.evaluate_all("items => items.map((item) => item.querySelector('.msg').id)")

    visited = []
    for number in range(1, total + 1):
        page.click("button[data-next-error]")
        jumped = page.locator(".item.jumped")
        expect(jumped).to_have_count(1)
        expect(page.locator("[data-timeline-status]")).to_have_text(
            f"Error {number} of {total} loaded."
        )
        expect(jumped).to_be_in_viewport()
        visited.append(jumped.evaluate("item => item.querySelector('.msg').id"))
    assert visited == ids
    shoot("last-error")

    page.click("button[data-next-error]")
    expect(page.locator("[data-timeline-status]")).to_have_text(
        f"Error 1 of {total} loaded: back to the first."
    )
    assert page.locator(".item.jumped").evaluate("i => i.querySelector('.msg').id") == ids[0]


def test_a_curator_creates_a_base_lands_on_it_and_searches_it(
    live_server, page, console_errors, transactional_db, worker, shoot
):
    curator = User.objects.create_user(username="cora", password="correct horse battery")
    curator.groups.add(Group.objects.get_or_create(name="curator")[0])
    make_actor("acme", "alice")
    _login(live_server, page, "cora")

    page.goto(f"{live_server.url}/console/knowledge/")
    form = page.locator("#knowledge-base-create")
    form.locator("select[name=project]").select_option(label="acme")
    form.locator("input[name=slug]").fill("pumps")
    form.locator("input[name=name]").fill("Pump manuals")
    form.locator("button[type=submit]").click()
    expect(page.locator("h1")).to_have_text("Pump manuals")
    expect(page).to_have_url(re.compile(r"/console/knowledge/[0-9a-f-]{36}/$"))

    page.set_input_files(
        "#upload-files input[type=file]",
        files=[
            {
                "name": "coolant.md",
                "mimeType": "text/markdown",
                "buffer": b"# Coolant pump\n\nRestart the coolant pump with the red lever.\n",
            }
        ],
    )
    page.click("#upload-files button[type=submit]")
    flash = page.locator(".flash", has_text="Stored 1 file; ingesting now.")
    expect(flash).to_be_visible()
    expect(page.locator("#document-list .badge.ready")).to_have_count(1, timeout=30_000)
    page.wait_for_timeout(1500)  # polls ran while it ingested and after: the message stays
    expect(flash).to_be_visible()

    page.fill("#kb-search-q", "coolant lever")
    page.click("#kb-search button[type=submit]")
    hit = page.locator("#kb-search-results .kb-hit").first
    expect(hit).to_contain_text("Restart the coolant pump with the red lever.")
    expect(hit.locator(".signals")).to_contain_text(re.compile(r"score \d\.\d{4} · lexical rank 1"))
    expect(hit.locator("a")).to_have_text("coolant.md")
    shoot("search")

    flash.locator("[data-dismiss]").click()
    expect(flash).to_have_count(0)
