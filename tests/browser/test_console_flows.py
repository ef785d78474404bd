"""The console's main flows in a real browser: upload and ingest, approve, config and rollback."""

from playwright.sync_api import expect

from apps.knowledge.models import KnowledgeBase
from apps.memconfig.selectors import config_effective
from tests.conftest import make_actor
from tests.pdfs import make_pdf


def test_a_curator_uploads_a_pdf_and_watches_it_become_ready(
    operator_login, page, worker, shoot, tmp_path
):
    alice = make_actor("acme", "alice")
    alice.post("/api/v1/knowledge-bases", {"slug": "manuals", "name": "Manuals"})
    kb = KnowledgeBase.objects.get(slug="manuals")
    pdf = tmp_path / "pump-manual.pdf"
    pdf.write_bytes(make_pdf(["Pump manual", "Bleed the pump before the first start.", "Index"]))

    page.click("nav >> text=Knowledge")
    page.click("text=manuals")
    page.set_input_files("input[name=files]", str(pdf))
    page.click("button:has-text('Upload')")

    documents = page.locator("#document-list")
    expect(documents).to_contain_text("pump-manual.pdf")
    expect(documents.locator(".badge", has_text="ready")).to_be_visible(timeout=30_000)
    shoot("ready")
    page.click("#document-list >> text=pump-manual.pdf")
    expect(page.locator("#document-state")).to_contain_text("Bleed the pump")
    expect(page.locator("#document-state")).to_contain_text("2")  # the page number of that chunk
    assert kb.documents.get().chunk_count == 3


def test_a_moderator_approves_an_entry(operator_login, page, shoot):
    alice = make_actor("acme", "alice")
    thread = alice.new_thread(resource_id="cust-1")
    [message] = alice.append(
        thread["id"], {"role": "user", "content": "Our VPN drops every day at 5pm."}
    )
    alice.post(
        "/api/v1/episodic",
        {
            "content": "The customer's VPN drops daily at 5pm.",
            "resource_id": "cust-1",
            "source": "user_assertion",
            "evidence": "VPN drops every day at 5pm",
            "message_id": message["id"],
        },
    )

    page.click("nav >> text=Moderation")
    entry = page.locator("[id^=entry-]").first
    expect(entry).to_contain_text("The customer's VPN drops daily at 5pm.")
    expect(entry.locator("mark")).to_have_text("VPN drops every day at 5pm")
    shoot("queue")
    entry.locator("button:has-text('Approve')").click()

    expect(page.locator("#messages")).to_contain_text("pproved")
    recalled = alice.post(
        "/api/v1/episodic/recall", {"query": "VPN drops", "resource_id": "cust-1"}
    )
    assert [r["status"] for r in recalled.json()["results"]] == ["approved"]


def test_an_admin_changes_a_config_value_and_rolls_it_back(operator_login, page, shoot):
    alice = make_actor("acme", "alice")

    page.goto(f"{operator_login}/console/config/?level=acme")
    page.fill("input[name=recent_window]", "35")
    page.click("button:has-text('Save changes')")
    expect(page.locator("#config-level")).to_contain_text("v1")
    assert config_effective(agent=alice.agent)["recent_window"] == 35
    shoot("changed")

    page.once("dialog", lambda dialog: dialog.accept())
    page.click("button:has-text('Clear all overrides')")

    expect(page.locator("#config-level")).to_contain_text("v2")
    assert config_effective(agent=alice.agent)["recent_window"] == 20
    shoot("rolled-back")


def test_every_console_page_renders_without_javascript_errors(operator_login, page, shoot):
    alice = make_actor("acme", "alice")
    alice.new_thread(title="t")
    for path in (
        "",
        "threads/",
        "jobs/",
        "knowledge/",
        "moderation/",
        "config/",
        "keys/",
        "audit/",
        "evaluation/",
    ):
        page.goto(f"{operator_login}/console/{path}")
        expect(page.locator("h1")).to_be_visible()
        shoot(path.strip("/") or "dashboard")
