"""axe-core on every console page: no serious or critical violation; a visible focus ring."""

from django.contrib.auth.models import User
from django.test import Client
from playwright.sync_api import expect

from tests.browser.test_layout_and_roles import _objects
from tests.console.urlconf import console_url, pattern_names


def _pages(objects: dict) -> dict[str, str]:
    """Every console page a browser opens (POST-only actions and bare fragments left out)."""
    client = Client()
    client.force_login(User.objects.get(username="ops"))
    pages = {}
    for name in pattern_names():
        url = console_url(name, objects)
        response = client.get(url)
        if response.status_code == 200 and b"<main>" in response.content:
            pages[name] = url
    return pages


def test_axe_finds_no_serious_or_critical_violation_on_any_page(operator_login, page, axe):
    objects = _objects()
    pages = _pages(objects)
    assert {"dashboard", "threads", "thread", "knowledge-base", "keys", "audit", "users"} <= set(
        pages
    )
    found = {}
    for name, url in pages.items():
        page.goto(f"{operator_login}{url}")
        if name == "thread":  # folded steps and bands hold most of the page: open them all
            page.click("button[data-timeline-fold=open]")
        violations = axe()
        if violations:
            found[name] = violations
    assert found == {}, found


def test_axe_passes_pages_in_the_states_users_bring_them_to(
    operator_login, page, axe, console_errors
):
    objects = _objects()
    base = operator_login
    page.goto(f"{base}/console/keys/")
    page.locator("#key-create select[name=agent]").select_option(index=1)
    page.click("#key-create button[type=submit]")
    expect(page.locator("#issued-secret")).to_be_visible()
    assert axe() == []

    page.goto(f"{base}/console/knowledge/{objects['kb_id']}/")
    page.fill("#kb-search-q", "restart")
    page.click("#kb-search button[type=submit]")
    expect(page.locator("#kb-search-results")).to_contain_text("hit")
    assert axe() == []

    response = page.goto(f"{base}/console/audit/?action=no.such.action")
    assert response.status == 400  # told, not ignored; the browser logs the status as an error
    assert console_errors.pop() == (
        "Failed to load resource: the server responded with a status of 400 (Bad Request)"
    )
    expect(page.locator("#audit-list [role=alert]")).to_contain_text("action=no.such.action")
    assert axe() == []


def test_the_keyboard_focus_shows_the_console_s_own_ring(operator_login, page):
    page.goto(f"{operator_login}/console/")
    page.keyboard.press("Tab")
    focused = page.evaluate(
        """() => {
          const style = getComputedStyle(document.activeElement);
          return {tag: document.activeElement.tagName, style: style.outlineStyle,
                  width: style.outlineWidth, color: style.outlineColor};
        }"""
    )
    assert focused["tag"] == "A"
    assert focused["style"] == "solid" and focused["width"] == "3px", focused


def test_a_code_block_is_reached_with_the_keyboard(operator_login, page):
    objects = _objects()
    page.goto(f"{operator_login}/console/threads/{objects['thread_id']}/")
    page.click("button[data-timeline-fold=open]")
    # From the block's Copy button, Tab moves into the block itself.
    page.locator(".code-block [data-copy]").first.focus()
    page.keyboard.press("Tab")
    block = page.locator(".code-block pre").first
    expect(block).to_be_focused()
    assert block.get_attribute("tabindex") == "0"
    assert block.get_attribute("aria-label").startswith(("Content of #", "Payload of #"))
    assert block.evaluate("e => getComputedStyle(e).outlineStyle") == "solid"
