"""PATCH /api/v1/episodic/{id}: checked like a proposal, re-embedded, versioned, audited."""

import pytest

from apps.audit.models import AuditEvent
from apps.jobs.services import job_run_pending
from apps.search.models import ItemEmbedding
from tests.episodic.conftest import configure


def _propose(actor, content, resource_id="cust-1", **extra) -> dict:
    response = actor.post(
        "/api/v1/episodic", {"content": content, "resource_id": resource_id, **extra}
    )
    assert response.status_code == 201, response.content
    return response.json()


def _url(entry) -> str:
    return f"/api/v1/episodic/{entry['id']}"


def test_it_changes_the_content_bumps_the_version_and_keeps_the_old_text_in_the_audit(alice):
    entry = _propose(alice, "The VPN drops at 5pm")

    response = alice.patch(_url(entry), {"content": "The VPN drops at 6pm", "version": 1})

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["content"] == "The VPN drops at 6pm" and body["version"] == 2
    event = AuditEvent.objects.get(action="entry.edit", object_id=entry["id"])
    assert event.before["content"] == "The VPN drops at 5pm" and event.before["version"] == 1
    assert event.after["content"] == "The VPN drops at 6pm" and event.after["version"] == 2


def test_the_new_text_is_what_recall_finds(alice):
    configure(alice, episodic_approval_required=False)
    entry = _propose(alice, "The VPN drops at 5pm")

    alice.patch(_url(entry), {"content": "Printer jams on tray two"})

    found = alice.post("/api/v1/episodic/recall", {"query": "printer tray"}).json()["results"]
    assert [result["content"] for result in found] == ["Printer jams on tray two"]
    assert alice.post("/api/v1/episodic/recall", {"query": "VPN"}).json()["results"] == []


def test_it_is_re_embedded(alice, use_embedder):
    run_jobs = use_embedder(alice)
    entry = _propose(alice, "The VPN drops at 5pm")
    run_jobs()
    before = ItemEmbedding.objects.get(item__entry_id=entry["id"]).pk

    alice.patch(_url(entry), {"content": "Printer jams on tray two"})
    run_jobs()

    assert ItemEmbedding.objects.get(item__entry_id=entry["id"]).pk != before


def test_metadata_alone_is_replaced_and_the_text_kept(alice):
    entry = _propose(alice, "The VPN drops at 5pm", metadata={"a": 1})

    body = alice.patch(_url(entry), {"metadata": {"b": 2}}).json()

    assert body["metadata"] == {"b": 2} and body["content"] == "The VPN drops at 5pm"
    assert body["version"] == 2


def test_an_approved_entry_whose_text_changes_is_pending_again_when_approval_is_required(
    alice, as_role
):
    entry = _propose(alice, "The VPN drops at 5pm")
    as_role("moderator").post(f"/console/moderation/{entry['id']}/approve/")

    body = alice.patch(_url(entry), {"content": "The VPN drops at 6pm"}).json()

    assert body["status"] == "pending"
    assert alice.post("/api/v1/episodic/recall", {"query": "VPN"}).json()["results"] == []


def test_a_stale_version_is_a_409(alice):
    entry = _propose(alice, "The VPN drops at 5pm")
    alice.patch(_url(entry), {"content": "The VPN drops at 6pm"})

    response = alice.patch(_url(entry), {"content": "The VPN drops at 7pm", "version": 1})

    assert response.status_code == 409
    error = response.json()["error"]
    assert "version: 1 is stale; the entry is at version 2" in error["message"]
    assert (error["code"], error["details"]) == ("stale_version", {"current_version": 2})


def test_text_another_entry_already_says_is_a_409(alice):
    kept = _propose(alice, "The VPN drops at 5pm")
    other = _propose(alice, "The VPN drops at 6pm")

    response = alice.patch(_url(other), {"content": "the vpn  drops at 5pm"})

    assert response.status_code == 409
    assert kept["id"] in response.json()["error"]["message"]


def test_a_near_duplicate_by_similarity_is_a_409(alice, use_embedder):
    run_jobs = use_embedder(alice)
    kept = _propose(alice, "The VPN drops at 5pm")
    other = _propose(alice, "Printer jams on tray two")
    run_jobs()

    response = alice.patch(_url(other), {"content": "The VPN drops at 5pm!"})

    assert response.status_code == 409
    error = response.json()["error"]
    assert kept["id"] in error["message"] and "episodic_dedupe_threshold" in error["message"]


def test_evidence_no_longer_in_its_message_is_refused(alice):
    thread = alice.new_thread(resource_id="cust-1")
    [message] = alice.append(thread["id"], {"role": "user", "content": "I moved to Berlin."})
    entry = _propose(
        alice,
        "Moved to Berlin",
        source="user_assertion",
        evidence="moved to Berlin",
        message_id=message["id"],
    )
    from apps.threads.models import Message

    Message.objects.filter(pk=message["id"]).update(content="(redacted)")

    response = alice.patch(_url(entry), {"content": "Lives in Berlin"})

    assert response.status_code == 422
    assert "evidence: not found verbatim" in response.json()["error"]["message"]


@pytest.mark.parametrize(
    "body, field",
    [
        ({"content": "   "}, "content: must not be blank"),
        ({"content": "x" * 1001}, "episodic_max_entry_length"),
        ({"version": 0}, "version"),
        ({"metadata": [1]}, "metadata"),
        ({"status": "approved"}, "status"),
    ],
)
def test_bad_input_is_a_4xx_naming_the_field(alice, body, field):
    entry = _propose(alice, "The VPN drops at 5pm")

    response = alice.patch(_url(entry), body)

    assert response.status_code == 400, response.content
    assert field in str(response.json()["error"])


def test_a_superseded_entry_cannot_change(alice):
    configure(alice, episodic_approval_required=False)
    old = _propose(alice, "Ships to 1 Old Street")
    _propose(alice, "Ships to 9 New Road", supersedes=old["id"])

    response = alice.patch(_url(old), {"content": "Ships to 2 Old Street"})

    assert response.status_code == 409
    assert "superseded" in response.json()["error"]["message"]


def test_other_agents_entries_answer_404(alice, bob, carol):
    entry = _propose(alice, "The VPN drops at 5pm")

    for outsider in (bob, carol):
        response = outsider.patch(_url(entry), {"content": "mine now"})
        assert response.status_code == 404
    job_run_pending()
