"""Every page at 1024 and 375 px, an admin who is not a superuser, knowledge bases deleted and
audited."""

import re

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from playwright.sync_api import expect

from apps.knowledge.models import KnowledgeBase
from apps.tenancy.selectors import api_key_list
from tests.browser.tool_loop import tool_loop_thread
from tests.conftest import make_actor
from tests.console.urlconf import console_url, pattern_names

NO_SIDEWAYS_SCROLL = "document.documentElement.scrollWidth <= document.documentElement.clientWidth"
# The innermost elements that reach past the window's right edge, to say what to fix.
TOO_WIDE = """[...document.querySelectorAll('body *')]
  .filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
  .filter(e => ![...e.children].some(c => c.getBoundingClientRect().right >
    document.documentElement.clientWidth + 1))
  .slice(0, 5)
  .map(e => `${e.tagName}.${e.className} ${Math.round(e.getBoundingClientRect().right)}`)"""


def _objects() -> dict:
    """One real object for each URL argument of the console, as in tests/console."""
    from apps.actions.models import ActionWebhook
    from apps.knowledge.services import document_from_text, knowledge_base_create
    from apps.memconfig.services import config_update

    alice = make_actor("acme", "alice")
    thread = tool_loop_thread(alice)
    given = alice.post(f"/api/v1/threads/{thread['id']}/context", {}).json()
    entry = alice.post(
        "/api/v1/episodic",
        {"content": "Parcels to Oslo go by DHL.", "resource_id": "cust-1", "source": "api"},
    ).json()
    kb = knowledge_base_create(project=alice.agent.project, slug="ops", name="Operations")
    long_title = "A runbook with a very long title_that_does_not_break_anywhere_" * 3
    document = document_from_text(kb=kb, title=long_title, text="Restart it.", actor="test")
    config_update(project=alice.agent.project, changes={"recent_window": 30}, changed_by="test")
    note = alice.post(
        "/api/v1/notes",
        # A token as long as a URL or a base64 blob, which no space breaks.
        {
            "path": "ops/deploy-checklist-with-a-long-path.md",
            "content": f"Deploy after [[x]]. {'x' * 3000}",
        },
    ).json()
    run = alice.post(f"/api/v1/threads/{thread['id']}/runs", {"name": "report"}).json()
    artifact = alice.post(
        f"/api/v1/runs/{run['id']}/artifacts", {"name": "report.md", "content": "# Report"}
    ).json()
    webhook = ActionWebhook.objects.create(
        project=alice.agent.project, name="NOTIFY", url="https://hooks.example.com/notify"
    )
    return {
        "artifact_id": artifact["id"],
        "webhook_id": webhook.id,
        "project_id": alice.agent.project.id,
        "note_id": note["id"],
        "context_id": given["context_id"],
        "thread_id": thread["id"],
        "kb_id": kb.id,
        "document_id": document.document.id,
        "entry_id": entry["id"],
        "key_id": api_key_list(agent=alice.agent).first().id,
        "to_version": 1,
        "user_id": User.objects.create_user(username="someone", password="pw").pk,
    }


# 375 px is a phone's width: the side column goes under the main one, wide tables scroll in
# their own box, and the page itself never scrolls sideways.
@pytest.mark.parametrize("width", [1024, 375])
def test_every_page_keeps_its_body_from_scrolling_sideways(operator_login, page, shoot, width):
    objects = _objects()
    # The pages a browser opens: actions that only take POST and htmx fragments are left out.
    client = Client()
    client.force_login(User.objects.get(username="ops"))
    pages = {}
    for name in pattern_names():
        url = console_url(name, objects)
        response = client.get(url)
        assert response.status_code in (200, 405), (name, response.status_code)
        if response.status_code == 200 and b"<main>" in response.content:
            pages[name] = url
    page.set_viewport_size({"width": width, "height": 800})
    checked = []
    for name, url in pages.items():
        response = page.goto(f"{operator_login}{url}")
        assert response.status == 200, (name, response.status)
        assert page.evaluate(NO_SIDEWAYS_SCROLL), (
            name,
            page.evaluate("document.documentElement.scrollWidth"),
            page.evaluate(TOO_WIDE),
        )
        checked.append(name)
        shoot(f"{width}-{name}")
    assert {"threads", "thread", "knowledge", "knowledge-document", "audit", "config"} <= set(
        checked
    )


def test_an_admin_who_is_not_a_superuser_opens_every_role_s_pages(
    live_server, page, console_errors, transactional_db, shoot
):
    admin = User.objects.create_user(username="ana", password="correct horse battery")
    admin.groups.add(Group.objects.get_or_create(name="admin")[0])
    thread = make_actor("acme", "alice").new_thread(title="Seen by the admin")
    page.goto(f"{live_server.url}/console/")
    page.fill("input[name=username]", "ana")
    page.fill("input[name=password]", "correct horse battery")
    page.click("button[type=submit]")

    nav = page.locator("nav")
    for label in ("Projects", "Threads", "Knowledge", "Moderation", "Audit log"):
        expect(nav.locator("a", has_text=label)).to_be_visible()
    for label in ("Threads", "Knowledge", "Moderation", "Projects"):
        nav.locator("a", has_text=label).click()
        expect(page.locator("h1")).to_contain_text(re.compile(label, re.I))
        expect(page.locator("main")).not_to_contain_text("Not allowed")
        shoot(label.lower())
    page.goto(f"{live_server.url}/console/threads/{thread['id']}/")
    expect(page.locator("h1")).to_have_text("Seen by the admin")


def test_a_knowledge_base_created_in_the_console_appears_in_the_audit_log(
    operator_login, page, shoot
):
    make_actor("acme", "alice")
    page.goto(f"{operator_login}/console/knowledge/")
    form = page.locator("#knowledge-base-create")
    form.locator("select[name=project]").select_option(label="acme")
    form.locator("input[name=slug]").fill("handbook")
    form.locator("input[name=name]").fill("Staff handbook")
    form.locator("button[type=submit]").click()
    expect(page.locator("h1")).to_have_text("Staff handbook")

    page.click("nav >> text=Audit log")
    row = page.locator("#audit-list tbody tr", has_text="knowledge_base.create")
    expect(row).to_have_count(1)
    expect(row).to_contain_text("user:ops")
    expect(row).to_contain_text("handbook")
    shoot("audit")


def test_a_knowledge_base_is_deleted_after_a_confirmation_that_counts_what_goes(
    operator_login, page, worker, shoot
):
    alice = make_actor("acme", "alice")
    alice.post("/api/v1/knowledge-bases", {"slug": "manuals", "name": "Manuals"})
    kb = KnowledgeBase.objects.get(slug="manuals")
    for title in ("Pumps", "Valves"):
        alice.post(
            "/api/v1/knowledge-bases/manuals/documents",
            {"title": title, "text": f"# {title}\n\nHow to service the {title.lower()}."},
        )
    page.goto(f"{operator_login}/console/knowledge/{kb.id}/")
    expect(page.locator("#document-list .badge.ready")).to_have_count(2, timeout=30_000)

    # Deleting one document lands on the knowledge base's list, at its address.
    page.click("#document-list >> text=Pumps")
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("button:has-text('Delete')")
    expect(page).to_have_url(re.compile(rf"/console/knowledge/{kb.id}/$"))
    expect(page.locator("#document-list")).to_contain_text("Valves")
    expect(page.locator("#document-list")).not_to_contain_text("Pumps")

    page.click("text=Delete knowledge base…")
    expect(page.locator("[data-count=documents]")).to_have_text("1 document")
    expect(page.locator("[data-count=chunks]")).to_contain_text("chunk")
    shoot("confirm")
    page.click("button:has-text('Delete manuals and everything in it')")
    expect(page).to_have_url(re.compile(r"/console/knowledge/$"))
    expect(page.locator(".flash")).to_contain_text("Deleted knowledge base manuals with 1 document")
    assert not KnowledgeBase.objects.filter(slug="manuals").exists()
