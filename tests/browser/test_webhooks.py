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
