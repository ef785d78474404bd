"""The notes browser in a real browser: the tree, a rendered note, following a link, backlinks,
and an edit refused because an agent saved a newer version first."""

from playwright.sync_api import expect

from tests.conftest import make_actor


def test_an_operator_browses_notes_follows_a_link_and_edits_with_a_version_check(
    operator_login, page, shoot
):
    alice = make_actor("acme", "alice")
    deploy = alice.post(
        "/api/v1/notes",
        {
            "scope": "shared",
            "path": "ops/deploy.md",
            "content": "# Deploy\n\nRun **make release**, then [[ops/rollback|check the undo]]."
            "\n\n<script>document.title='pwned'</script>",
        },
    ).json()
    alice.post("/api/v1/notes", {"scope": "shared", "path": "ops/rollback.md", "content": "Undo."})
    alice.post(
        "/api/v1/notes", {"scope": "shared", "path": "index.md", "content": "[[ops/deploy]]"}
    )

    page.click("nav >> text=Notes")
    tree = page.locator("#note-tree")
    expect(tree).to_contain_text("ops/")
    expect(tree.locator("a")).to_have_text(["deploy.md", "rollback.md", "index.md"])
    shoot("tree")

    tree.locator("a", has_text="deploy.md").click()
    body = page.locator("#note-body")
    expect(body.locator("h1")).to_have_text("Deploy")
    expect(body.locator("strong")).to_have_text("make release")
    expect(body).to_contain_text("<script>document.title='pwned'</script>")  # shown, not run
    assert page.title() != "pwned"
    expect(page.locator("#note-backlinks")).to_contain_text("index.md")
    shoot("note")

    body.locator("a.wikilink", has_text="check the undo").click()
    expect(page.locator("h1")).to_have_text("rollback")
    expect(page.locator("#note-backlinks")).to_contain_text("ops/deploy.md")

    page.goto(f"{operator_login}/console/notes/{deploy['id']}/")
    page.click("text=Edit")
    page.fill("textarea[name=content]", "# Deploy\n\nOperator's version.")
    changed = alice.patch(
        f"/api/v1/notes/{deploy['id']}", {"version": 1, "content": "# Deploy\n\nAgent's version."}
    )
    assert changed.status_code == 200
    page.click("button:has-text('Save')")
    expect(page.locator("#note-edit .error")).to_contain_text("Note version is 2, not 1")
    expect(page.locator("textarea[name=content]")).to_have_value("# Deploy\n\nOperator's version.")
    shoot("stale")

    page.click("button:has-text('Save')")
    expect(page.locator("#messages")).to_contain_text("version 3")
    expect(page.locator("#note-body")).to_contain_text("Operator's version.")
