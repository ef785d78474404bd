"""The console under its content security policy: htmx and the console's script work, and the
browser reports no violation (an inline style is refused, as the policy says)."""

from playwright.sync_api import expect

from apps.knowledge.models import KnowledgeBase
from tests.conftest import make_actor

# Records every violation the browser reports, from the first script of each page on.
RECORD_VIOLATIONS = """
window.cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
    window.cspViolations.push(event.violatedDirective + " " + event.blockedURI);
});
"""


def test_htmx_swaps_fragments_under_the_policy_with_no_violation(operator_login, page, shoot):
    alice = make_actor("acme", "alice")
    alice.post("/api/v1/knowledge-bases", {"slug": "manuals", "name": "Manuals"})
    kb = KnowledgeBase.objects.get(slug="manuals")
    page.add_init_script(RECORD_VIOLATIONS)

    response = page.goto(f"{operator_login}/console/knowledge/{kb.id}/")
    assert "script-src 'self'" in response.headers["content-security-policy"]
    page.evaluate("window.notReloaded = true")
    page.fill("#paste-text input[name=title]", "Valves")
    page.fill("#paste-text textarea[name=text]", "Close the inlet valve first.")
    page.click("#paste-text button:has-text('Store text')")

    documents = page.locator("#document-list")
    expect(documents).to_contain_text("Valves")
    # The list changed in place: htmx did it, with no page load.
    assert page.evaluate("window.notReloaded") is True
    expect(documents.locator("progress.progress")).to_have_count(1)
    shoot("pasted")
    assert page.evaluate("window.cspViolations") == []


def test_the_browser_enforces_the_policy(operator_login, page, console_errors):
    page.add_init_script(RECORD_VIOLATIONS)
    page.goto(f"{operator_login}/console/")

    page.evaluate("document.body.setAttribute('style', 'background: red')")
    page.wait_for_function("window.cspViolations.length > 0")

    assert page.evaluate("getComputedStyle(document.body).backgroundColor") != "rgb(255, 0, 0)"
    assert page.evaluate("window.cspViolations")[0].startswith("style-src")
    console_errors.clear()  # the refusal above is logged as an error, as it should be
