"""The console's main flows in a real browser: upload and ingest, approve, config and rollback."""

import re

from playwright.sync_api import expect

from apps.evaluation.models import EvaluationRun
from apps.knowledge.models import KnowledgeBase
from apps.memconfig.selectors import config_effective
from tests.conftest import make_actor
from tests.pdfs import make_pdf


def _manuals() -> KnowledgeBase:
    alice = make_actor("acme", "alice")
    alice.post("/api/v1/knowledge-bases", {"slug": "manuals", "name": "Manuals"})
    return KnowledgeBase.objects.get(slug="manuals")


def test_a_curator_uploads_a_pdf_and_watches_it_become_ready(
    operator_login, page, worker, shoot, tmp_path
):
    kb = _manuals()
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
    chunk = page.locator("#document-state tbody tr", has_text="Bleed the pump")
    expect(chunk).to_have_count(1)
    expect(chunk.locator("td").nth(1)).to_have_text("2")  # the Page column: the PDF's 2nd page
    expect(
        page.locator("#document-state tbody tr", has_text="Index").locator("td").nth(1)
    ).to_have_text("3")
    shoot("document")
    assert kb.documents.get().chunk_count == 3


def test_a_file_dropped_on_the_drop_zone_is_uploaded_and_ingested(
    operator_login, page, worker, shoot
):
    kb = _manuals()
    page.goto(f"{operator_login}/console/knowledge/{kb.id}/")
    zone = page.locator("[data-dropzone]")

    # A real drop: DragEvents carrying a DataTransfer with a File, as a desktop drag sends them.
    zone.evaluate(
        """(zone, text) => {
            const data = new DataTransfer();
            data.items.add(new File([text], "valves.md", { type: "text/markdown" }));
            const send = (type) => zone.dispatchEvent(
                new DragEvent(type, { dataTransfer: data, bubbles: true, cancelable: true }));
            send("dragenter");
            window.overWhileDragging = zone.classList.contains("over");
            send("dragover");
            send("drop");
        }""",
        "# Valves\n\nClose the inlet valve before opening the filter housing.\n",
    )

    assert page.evaluate("window.overWhileDragging") is True
    expect(zone).not_to_have_class("dropzone over")
    documents = page.locator("#document-list")
    expect(documents).to_contain_text("valves.md")
    expect(documents.locator(".badge", has_text="ready")).to_be_visible(timeout=30_000)
    shoot("dropped")
    assert kb.documents.get().title == "valves.md"
    assert page.locator("input[name=files]").evaluate("input => input.files.length") == 0


def test_a_moderator_approves_an_entry(operator_login, page, shoot):
    alice = make_actor("acme", "alice")
    thread = alice.new_thread(resource_id="cust-1")
    [message] = alice.append(
        thread["id"], {"role": "user", "content": "Our VPN drops every day at 5pm."}
    )
    created = alice.post(
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
    entry = page.locator("article.entry").first
    expect(entry).to_contain_text("The customer's VPN drops daily at 5pm.")
    expect(entry.locator("mark")).to_have_text("VPN drops every day at 5pm")
    shoot("queue")
    entry.locator("button:has-text('Approve')").click()

    expect(page.locator("#messages")).to_contain_text("pproved")
    recalled = alice.post(
        "/api/v1/episodic/recall", {"query": "VPN drops", "resource_id": "cust-1"}
    )
    assert [r["status"] for r in recalled.json()["results"]] == ["approved"]

    page.goto(f"{operator_login}/console/moderation/{created.json()['id']}/")
    expect(page.locator("h1")).to_be_visible()
    expect(page.locator(".entry")).to_contain_text("approved")
    shoot("entry")
    page.click("text=the thread at #1")
    expect(page.locator("#m-1")).to_have_class(re.compile(r"\bhighlight\b"))
    expect(page.locator("#m-1")).to_be_in_viewport()


def test_an_admin_changes_a_config_value_and_rolls_it_back(operator_login, page, shoot):
    alice = make_actor("acme", "alice")

    page.goto(f"{operator_login}/console/config/?level=acme")
    page.fill("input[name=recent_window]", "35")
    page.click("button:has-text('Save changes')")
    expect(page.locator("#config-level")).to_contain_text("v1")
    page.fill("input[name=recent_window]", "40")
    page.click("button:has-text('Save changes')")
    expect(page.locator("#config-history")).to_contain_text("v2")
    assert config_effective(agent=alice.agent)["recent_window"] == 40
    shoot("changed")

    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#config-history button:has-text('Roll back to v1')")

    expect(page.locator("#config-history li").first).to_contain_text("v3")
    expect(page.locator("#config-history li").first).to_contain_text("current")
    expect(page.locator("input[name=recent_window]")).to_have_value("35")
    assert config_effective(agent=alice.agent)["recent_window"] == 35
    shoot("rolled-back")


def test_every_console_page_renders_without_javascript_errors(operator_login, page, shoot):
    alice = make_actor("acme", "alice")
    alice.new_thread(title="t")
    figures = {"R@5": 0.62, "R@10": 0.81, "R@20": 0.93, "MRR": 0.55, "nDCG@10": 0.6}
    block = {"n": 40, "lexical": figures, "vector": figures, "fused": figures}
    EvaluationRun.objects.create(
        project=alice.agent.project,
        started_by="user:ops",
        status="done",
        metrics=dict.fromkeys(("exact", "paraphrase", "temporal", "all"), block),
    )
    for path in (
        "",
        "projects/",
        "threads/",
        "jobs/",
        "knowledge/",
        "moderation/",
        "config/",
        "keys/",
        "webhooks/",
        "audit/",
        "evaluation/",
    ):
        page.goto(f"{operator_login}/console/{path}")
        expect(page.locator("h1")).to_be_visible()
        if path == "evaluation/":
            # Every bar is drawn inside the chart's box: none is cut off at its right edge.
            chart = page.locator("svg.chart").bounding_box()
            bars = [rect.bounding_box() for rect in page.locator("svg.chart rect").all()]
            assert len(bars) == 9
            assert all(bar["x"] + bar["width"] <= chart["x"] + chart["width"] for bar in bars)
        shoot(path.strip("/") or "dashboard")


def test_the_login_page_refuses_a_wrong_password(live_server, page, console_errors, shoot, db):
    page.goto(f"{live_server.url}/console/threads/")
    expect(page).to_have_url(re.compile(r"/console/login/\?next=/console/threads/$"))
    shoot("login")
    page.fill("input[name=username]", "nobody")
    page.fill("input[name=password]", "wrong")
    page.click("button[type=submit]")

    expect(page.locator("main")).to_contain_text("username and password did not match")
    expect(page.locator("input[name=username]")).to_have_value("nobody")
    shoot("refused")
