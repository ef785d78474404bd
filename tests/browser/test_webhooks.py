"""An operator configures an action webhook in the console, as a browser would."""

from playwright.sync_api import expect

from apps.actions.models import ActionSecret, ActionWebhook
from tests.conftest import make_actor


def test_an_operator_adds_a_webhook_after_a_refused_address(operator_login, page, settings, shoot):
    settings.OUTBOUND_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    project = make_actor("acme", "alice").agent.project

    page.goto(f"{operator_login}/console/webhooks/")
    page.select_option("#webhook-add select[name=project]", str(project.id))
    page.fill("#webhook-add input[name=name]", "TRIGGER_SPEC")
    page.fill("#webhook-add input[name=url]", "http://10.0.0.8/spec")
    page.click("button:has-text('Add webhook')")
    expect(page.locator("#webhook-add")).to_contain_text("private")
    shoot("refused")

    page.fill("#webhook-add input[name=url]", "http://127.0.0.1:9/spec")
    page.click("button:has-text('Add webhook')")

    expect(page.locator("#webhook-list")).to_contain_text("[[TRIGGER_SPEC: …]]")
    secret = ActionSecret.objects.get(project=project).secret
    expect(page.locator("#webhook-secret")).to_contain_text(secret)
    assert ActionWebhook.objects.get().url == "http://127.0.0.1:9/spec"
    shoot("added")


def test_rotating_the_secret_and_deleting_a_webhook_ask_first(operator_login, page, settings):
    settings.OUTBOUND_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    project = make_actor("acme", "alice").agent.project
    ActionWebhook.objects.create(project=project, name="NOTIFY", url="http://127.0.0.1:9/n")
    ActionSecret.objects.create(project=project, secret="s" * 43)
    page.goto(f"{operator_login}/console/webhooks/?project={project.id}")
    asked = []

    def answer(dialog, accept: bool):
        asked.append(dialog.message)
        dialog.accept() if accept else dialog.dismiss()

    page.once("dialog", lambda dialog: answer(dialog, accept=False))
    page.click("button:has-text('Rotate the secret')")
    page.once("dialog", lambda dialog: answer(dialog, accept=False))
    page.click("#webhook-list button:has-text('Delete')")

    assert asked[0].startswith("Rotate the signing secret of acme?")
    assert asked[1].startswith("Delete the webhook NOTIFY?")
    assert ActionSecret.objects.get(project=project).secret == "s" * 43
    assert ActionWebhook.objects.filter(name="NOTIFY").exists()

    page.once("dialog", lambda dialog: answer(dialog, accept=True))
    page.click("#webhook-list button:has-text('Delete')")
    expect(page.locator("#webhook-list")).not_to_contain_text("NOTIFY")
    assert not ActionWebhook.objects.filter(name="NOTIFY").exists()
