"""What an operator sees when an htmx request of the console fails: a 400's fragment naming what
to fix, a line saying what happened for any other error, and after a session that ended, the
login form leading back to the page (not to the fragment the request asked for)."""

from urllib.parse import urlencode

from playwright.sync_api import expect

from apps.knowledge.services import knowledge_base_create
from tests.conftest import make_actor

PASSWORD = "correct horse battery"


def _long_thread(alice) -> str:
    thread = alice.new_thread(title="Parcels")["id"]
    for start in range(0, 300, 100):
        alice.append(
            thread,
            *[
                {"role": "user", "content": f"Where is parcel {n}?"}
                for n in range(start, start + 100)
            ],
        )
    return thread


def test_a_bad_search_parameter_shows_its_message_where_the_results_go(
    operator_login, page, console_errors
):
    alice = make_actor("acme", "alice")
    kb = knowledge_base_create(project=alice.agent.project, slug="ops", name="Operations")
    page.goto(f"{operator_login}/console/knowledge/{kb.id}/")
    page.fill("#kb-search-q", "restart")
    # A value the form's own check would stop, as a hand-edited URL or an old page sends it.
    page.eval_on_selector(
        "#kb-search [name=top_k]", "e => { e.removeAttribute('min'); e.value = 0 }"
    )

    page.click("#kb-search button[type=submit]")

    expect(page.locator("#kb-search-results [role=alert]")).to_contain_text("top_k:")
    assert console_errors == [
        "Failed to load resource: the server responded with a status of 400 (Bad Request)"
    ]
    console_errors.clear()


def test_an_action_refused_says_so_instead_of_doing_nothing(operator_login, page, console_errors):
    thread = make_actor("acme", "alice").new_thread(title="Parcels")["id"]
    page.goto(f"{operator_login}/console/threads/{thread}/")
    page.context.clear_cookies()  # the session and the CSRF cookie are gone: the POST is a 403

    search = page.locator("form[hx-post]", has=page.locator("[name=q]")).first
    search.locator("[name=q]").fill("parcel")
    search.locator("button[type=submit]").click()

    alert = page.locator("#messages .flash.error[role=alert]")
    expect(alert).to_contain_text("Not done: refused (403).")
    assert console_errors and all("403" in error for error in console_errors), console_errors
    console_errors.clear()


def test_after_the_session_ends_logging_in_again_leads_back_to_the_page(
    operator_login, page, console_errors
):
    thread = _long_thread(make_actor("acme", "alice"))
    page.goto(f"{operator_login}/console/threads/{thread}/")
    page.context.clear_cookies(name="sessionid")  # the session ended; the CSRF cookie stays

    page.locator("#load-earlier button").click()

    back = urlencode({"next": f"/console/threads/{thread}/"})
    page.wait_for_url(f"{operator_login}/console/login/?{back}")
    page.fill("input[name=username]", "ops")
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{operator_login}/console/threads/{thread}/")
    expect(page.locator("header.topbar nav")).to_be_visible()
    expect(page.locator("#timeline")).to_be_visible()
