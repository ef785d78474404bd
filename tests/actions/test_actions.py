"""[[NAME: argument]] tokens: recorded on the thread, listed, delivered to a project's webhook."""

import hashlib
import hmac
import json
import threading
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from apps.actions.models import ActionEvent, ActionSecret, ActionWebhook
from apps.actions.services import webhook_delete, webhook_save
from apps.audit.models import AuditEvent
from apps.core.errors import Conflict, NotFound
from apps.episodic.memory_actions import memory_actions
from apps.jobs.models import Job
from apps.jobs.services import job_run_pending
from apps.threads.action_tokens import action_tokens

ANSWER = (
    "Done. [[TRIGGER_SPEC: build the login page]] [[MEMORY: Ann likes tea]] "
    "and [[NOTIFY:  ops team ]]"
)


class Receiver:
    """A webhook receiver on loopback that answers each POST with the next status given."""

    def __init__(self, statuses):
        self.statuses = list(statuses)
        self.requests = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.requests.append((self.path, dict(self.headers), body))
                status = receiver.statuses.pop(0) if receiver.statuses else 200
                self.send_response(status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def receiver_factory(settings):
    settings.OUTBOUND_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    started = []

    def start(*statuses):
        started.append(Receiver(statuses))
        return started[-1]

    yield start
    for receiver in started:
        receiver.server.shutdown()
        receiver.server.server_close()


def hook(actor, name, url):
    return ActionWebhook.objects.create(project=actor.agent.project, name=name, url=url)


def test_one_parser_reads_actions_and_memory_tokens():
    assert [(t.name, t.argument) for t in action_tokens(ANSWER)] == [
        ("TRIGGER_SPEC", "build the login page"),
        ("MEMORY", "Ann likes tea"),
        ("NOTIFY", "ops team"),
    ]
    assert memory_actions(ANSWER) == [("Ann likes tea", "[[MEMORY: Ann likes tea]]")]
    # A token never spans another's opening: the inner one is the token.
    assert [t.written for t in action_tokens("[[A: x [[B: y]]")] == ["[[B: y]]"]
    assert action_tokens("[[lower: no]] [[EMPTY:]] [[NO COLON]]") == []


def test_an_answers_actions_are_listed_on_the_thread(alice, bob):
    thread = alice.new_thread()
    _, answer = alice.append(
        thread["id"],
        {"role": "user", "content": "[[TRIGGER_SPEC: from the user]]"},
        {"role": "assistant", "content": ANSWER},
    )

    listed = alice.get(f"/api/v1/threads/{thread['id']}/actions").json()["results"]
    named = alice.get(f"/api/v1/threads/{thread['id']}/actions", {"name": "NOTIFY"}).json()
    bad = alice.get(f"/api/v1/threads/{thread['id']}/actions", {"name": "no such"})

    assert [(a["name"], a["argument"], a["position"]) for a in listed] == [
        ("TRIGGER_SPEC", "build the login page", 0),
        ("NOTIFY", "ops team", 1),
    ]
    assert {a["message_id"] for a in listed} == {answer["id"]}
    assert {a["delivery"] for a in listed} == {"none"}
    assert [a["name"] for a in named["results"]] == ["NOTIFY"]
    assert bad.status_code == 400 and "name" in str(bad.json()["error"])
    assert bob.get(f"/api/v1/threads/{thread['id']}/actions").status_code == 404
    assert Job.objects.filter(kind="actions.webhook").count() == 0


def test_an_action_with_a_webhook_reaches_it_signed(alice, receiver_factory):
    receiver = receiver_factory(200)
    hook(alice, "TRIGGER_SPEC", receiver.url)
    thread = alice.new_thread()
    alice.append(thread["id"], {"role": "assistant", "content": ANSWER})

    job_run_pending()

    [(path, headers, body)] = receiver.requests
    secret = ActionSecret.objects.get(project=alice.agent.project).secret
    signed = headers["X-Memory-Console-Timestamp"].encode() + b"." + body
    expected = hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()
    assert path == "/hook" and headers["X-Memory-Console-Action"] == "TRIGGER_SPEC"
    assert headers["User-Agent"].startswith("MemoryConsole/")
    assert headers["X-Memory-Console-Signature"] == f"sha256={expected}"
    sent = json.loads(body)
    assert (sent["name"], sent["argument"]) == ("TRIGGER_SPEC", "build the login page")
    assert (sent["thread_id"], sent["project"], sent["agent"]) == (thread["id"], "acme", "alice")
    listed = alice.get(f"/api/v1/threads/{thread['id']}/actions").json()["results"]
    assert [(a["name"], a["delivery"], a["attempts"], a["response_status"]) for a in listed] == [
        ("TRIGGER_SPEC", "delivered", 1, 200),
        ("NOTIFY", "none", 0, None),
    ]
    assert listed[0]["delivered_at"] is not None


def test_a_failing_receiver_is_retried_and_its_failure_recorded(alice, receiver_factory):
    receiver = receiver_factory(*[500] * 5)
    hook(alice, "NOTIFY", receiver.url)
    thread = alice.new_thread()
    alice.append(thread["id"], {"role": "assistant", "content": "[[NOTIFY: disk full]]"})

    job_run_pending()
    after_one = ActionEvent.objects.get()
    for _ in range(4):  # each retry waits; make it due now
        Job.objects.filter(kind="actions.webhook").update(run_after=timezone.now())
        job_run_pending()

    assert (after_one.delivery, after_one.attempts, after_one.response_status) == (
        "pending",
        1,
        500,
    )
    assert "answered HTTP 500" in after_one.error
    event = ActionEvent.objects.get()
    assert (event.delivery, event.attempts, event.response_status) == ("failed", 5, 500)
    assert "gave up after 5 attempts" in event.error
    assert len(receiver.requests) == 5
    assert Job.objects.get(kind="actions.webhook").status == "failed"


def test_a_receiver_that_recovers_gets_the_action_on_a_retry(alice, receiver_factory):
    receiver = receiver_factory(503, 200)
    hook(alice, "NOTIFY", receiver.url)
    thread = alice.new_thread()
    alice.append(thread["id"], {"role": "assistant", "content": "[[NOTIFY: disk full]]"})

    job_run_pending()
    Job.objects.filter(kind="actions.webhook").update(run_after=timezone.now())
    job_run_pending()

    event = ActionEvent.objects.get()
    assert (event.delivery, event.attempts, event.error) == ("delivered", 2, "")
    assert len(receiver.requests) == 2


def test_a_private_address_is_refused_unless_allowed(alice, receiver_factory, settings):
    receiver = receiver_factory(200)
    settings.OUTBOUND_ALLOWED_NETWORKS = []
    hook(alice, "NOTIFY", receiver.url)
    thread = alice.new_thread()
    alice.append(thread["id"], {"role": "assistant", "content": "[[NOTIFY: x]]"})

    job_run_pending()

    event = ActionEvent.objects.get()
    assert event.delivery == "failed" and event.attempts == 1
    assert "loopback" in event.error and "OUTBOUND_ALLOWED_NETWORKS" in event.error
    assert receiver.requests == []
    job = Job.objects.get(kind="actions.webhook")
    assert job.status == "failed" and job.attempts == 1
    assert job.run_after < timezone.now() + timedelta(seconds=1)


def test_a_webhook_removed_before_delivery_is_skipped(alice, receiver_factory):
    receiver = receiver_factory(200)
    webhook = hook(alice, "NOTIFY", receiver.url)
    thread = alice.new_thread()
    alice.append(thread["id"], {"role": "assistant", "content": "[[NOTIFY: x]]"})
    webhook.delete()

    job_run_pending()

    assert ActionEvent.objects.get().delivery == "skipped"
    assert receiver.requests == []


@pytest.mark.parametrize(
    ("name", "url", "field"),
    [
        ("notify", "https://hooks.example.com/x", "name"),
        ("MEMORY", "https://hooks.example.com/x", "name"),
        ("NOTIFY", "ftp://hooks.example.com/x", "url"),
        ("NOTIFY", "https://user:pw@hooks.example.com/x", "url"),
        ("NOTIFY", "https://hooks.example.com:99999/x", "url"),
    ],
)
def test_a_webhook_is_checked_before_it_is_saved(alice, name, url, field):
    webhook = ActionWebhook(project=alice.agent.project, name=name, url=url)

    with pytest.raises(ValidationError) as refused:
        webhook.full_clean()

    assert field in refused.value.message_dict


def test_actions_go_with_their_thread(alice):
    thread = alice.new_thread()
    alice.append(thread["id"], {"role": "assistant", "content": "[[NOTIFY: x]]"})

    assert alice.delete(f"/api/v1/threads/{thread['id']}").status_code == 204
    assert ActionEvent.objects.count() == 0


def test_an_admin_configures_a_webhook_and_gets_the_projects_secret(alice):
    client = Client()
    client.force_login(User.objects.create_superuser(username="root", password="pw"))
    add = reverse("admin:actions_actionwebhook_add")
    form = {"project": alice.agent.project.pk, "name": "NOTIFY", "active": "on"}

    refused = client.post(add, {**form, "url": "file:///etc/passwd"})
    saved = client.post(add, {**form, "url": "https://hooks.example.com/notify"})

    assert refused.status_code == 200 and "An http or https address" in refused.text
    assert saved.status_code == 302
    assert ActionWebhook.objects.get().url == "https://hooks.example.com/notify"
    secret = ActionSecret.objects.get(project=alice.agent.project)
    shown = client.get(reverse("admin:actions_actionsecret_change", args=[secret.pk]))
    assert secret.secret in shown.text


def _saved(project, name, url="https://hooks.example.com/x") -> ActionWebhook:
    return webhook_save(webhook=ActionWebhook(project=project, name=name, url=url), actor="t")


def test_a_name_taken_after_the_forms_check_is_a_409_not_a_database_error(alice):
    # Two saves of one name at once both pass any check made before their insert; the second
    # reaches the service as this one does, after the first has stored the name.
    project = alice.agent.project
    first = _saved(project, "NOTIFY")
    other = _saved(project, "OTHER")

    with pytest.raises(Conflict) as added:
        _saved(project, "NOTIFY", url="https://hooks.example.com/y")
    other.name = "NOTIFY"
    with pytest.raises(Conflict) as renamed:
        webhook_save(webhook=other, actor="t")

    for refused in (added.value, renamed.value):
        assert refused.code == "duplicate"
        assert refused.details == {
            "name": ["The project already has a webhook for [[NOTIFY: …]]; change that one."]
        }
    assert sorted(ActionWebhook.objects.values_list("name", "id")) == [
        ("NOTIFY", first.id),
        ("OTHER", other.id),
    ]
    assert AuditEvent.objects.filter(object_type="action_webhook").count() == 2


def test_changing_a_webhook_deleted_meanwhile_is_not_found_and_does_not_store_it_again(alice):
    webhook = _saved(alice.agent.project, "NOTIFY")
    webhook_delete(webhook=ActionWebhook.objects.get(pk=webhook.pk), actor="t")
    webhook.url = "https://hooks.example.com/changed"

    with pytest.raises(NotFound):
        webhook_save(webhook=webhook, actor="t")

    assert not ActionWebhook.objects.exists()
