"""The moderation queue at scale: filters by source, agent and age, sorting, decisions on all
that match, counts kept up to date, and the conversation around an entry's evidence."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.audit.models import AuditEvent
from apps.episodic.models import MemoryEntry
from apps.memconfig.services import config_update

QUEUE = "/console/moderation/"
MATCHING = "/console/moderation/matching/"
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def moderator(as_role):
    return as_role("moderator")


def propose(actor, content, *, source="api", said=None, resource_id="cust-1") -> str:
    """Propose an entry through the API; with `said`, a user message says it word for word."""
    body = {"content": content, "resource_id": resource_id, "source": source}
    if said is not None:
        thread = actor.new_thread(resource_id=resource_id)
        [message] = actor.append(thread["id"], {"role": "user", "content": said})
        body.update(source="user_assertion", evidence=said, message_id=message["id"])
    response = actor.post("/api/v1/episodic", body)
    assert response.status_code == 201, response.content
    return response.json()["id"]


def shown(page: str) -> list[str]:
    """The contents of the entries the page lists, in the page's order."""
    found = [(page.find(f'id="entry-{e.id}"'), e.content) for e in MemoryEntry.objects.all()]
    return [content for at, content in sorted(found) if at >= 0]


def test_it_filters_by_source(alice, moderator):
    propose(alice, "Written by a program")
    propose(alice, "Said by the user", said="I moved to Berlin in May.")
    MemoryEntry.objects.create(
        agent=alice.agent, content="Consolidated", content_hash="c", source="consolidation"
    )

    def listed(source):
        return shown(moderator.get(QUEUE, {"source": source}).content.decode())

    assert listed("api") == ["Written by a program"]
    assert listed("agent") == ["Said by the user"]
    assert listed("consolidation") == ["Consolidated"]
    assert listed("extraction") == []
    assert len(listed("")) == 3


def test_it_filters_by_age_and_sorts(alice, bob, moderator):
    old = propose(alice, "A week and a day old")
    propose(bob, "Fresh from bob")
    propose(alice, "Fresh from alice")
    MemoryEntry.objects.filter(pk=old).update(created_at=timezone.now() - timedelta(days=8))

    def listed(**params):
        return shown(moderator.get(QUEUE, params).content.decode())

    assert listed(age="older-than-week") == ["A week and a day old"]
    assert listed(age="day") == ["Fresh from alice", "Fresh from bob"]
    assert listed(sort="oldest") == ["A week and a day old", "Fresh from bob", "Fresh from alice"]
    assert listed(sort="agent")[-1] == "Fresh from bob"  # acme/alice before acme/bob


@pytest.mark.parametrize(
    "params, says",
    [
        ({"source": "rumour"}, "source: rumour is not one of the choices"),
        ({"age": "ancient"}, "age: ancient is not one of the choices"),
        ({"sort": "random"}, "sort: random is not one of the choices"),
        ({"agent": "01a21cc2-eb78-7502-af69-bc52fe3cedf5"}, "agent: no such agent"),
    ],
)
def test_an_unknown_filter_value_is_told_and_offers_no_bulk_decision(
    alice, moderator, params, says
):
    propose(alice, "Still listed")

    page = moderator.get(QUEUE, params).content.decode()
    refused = moderator.post(f"{MATCHING}?{_query(params)}", {"action": "approve"}, follow=True)

    assert says in page
    assert "Still listed" in page
    assert "Approve all" not in page
    assert "Fix the filters first: nothing was changed." in refused.content.decode()
    assert MemoryEntry.objects.get().status == "pending"


def _query(params: dict) -> str:
    from urllib.parse import urlencode

    return urlencode(params)


def test_approve_all_matching_is_one_update_audited_and_leaves_the_rest(alice, bob, moderator):
    mine = [propose(alice, f"Alice's fact {n}") for n in range(30)]
    propose(alice, "Alice's user said it", said="My dog is called Rex.")
    theirs = propose(bob, "Bob's fact")

    with CaptureQueriesContext(connection) as queries:
        response = moderator.post(
            f"{MATCHING}?source=api&agent={alice.agent.id}", {"action": "approve"}, follow=True
        )

    assert "Approved 30 entries matching the filters." in response.content.decode()
    statuses = dict(MemoryEntry.objects.values_list("content", "status"))
    assert {statuses[f"Alice's fact {n}"] for n in range(30)} == {"approved"}
    assert statuses["Alice's user said it"] == "pending"  # another source
    assert MemoryEntry.objects.get(pk=theirs).status == "pending"  # another agent
    updates = [q["sql"] for q in queries.captured_queries if q["sql"].startswith("UPDATE")]
    assert len([sql for sql in updates if "episodic_memoryentry" in sql]) == 1
    [event] = AuditEvent.objects.filter(action="entry.bulk_approve")
    assert event.actor == "user:moderator" and event.after["count"] == 30
    assert sorted(event.after["ids"]) == sorted(mine)
    assert "source=api" in event.after["filter"]
    found = alice.post("/api/v1/episodic/recall", {"query": "Alice's fact 7"}).json()["results"]
    assert "Alice's fact 7" in [hit["content"] for hit in found]


def test_reject_all_matching_takes_only_pending_entries(alice, moderator):
    approved = propose(alice, "Approved already")
    moderator.post(f"{QUEUE}{approved}/approve/")
    propose(alice, "Waiting one")
    propose(alice, "Waiting two")

    moderator.post(MATCHING, {"action": "reject"})

    statuses = dict(MemoryEntry.objects.values_list("content", "status"))
    assert statuses == {
        "Approved already": "approved",
        "Waiting one": "rejected",
        "Waiting two": "rejected",
    }


def test_a_bulk_decision_needs_approve_or_reject(alice, moderator):
    propose(alice, "Left alone")

    response = moderator.post(MATCHING, {"action": "delete"}, follow=True)

    assert "action: &#x27;delete&#x27; is not approve or reject." in response.content.decode()
    assert MemoryEntry.objects.get().status == "pending"


def test_the_queue_count_updates_out_of_band_after_an_approval(alice, moderator):
    first = propose(alice, "Ships from Rotterdam")
    propose(alice, "Ships from Antwerp")
    propose(alice, "Ships from Hamburg")
    page = moderator.get(QUEUE).content.decode()
    assert '<span class="muted" id="queue-count">3 entries pending</span>' in page

    body = moderator.post(f"{QUEUE}{first}/approve/?status=pending", **HTMX).content.decode()

    assert '<span class="muted" id="queue-count" hx-swap-oob="true">2 entries pending' in body
    assert '<span class="badge pending" id="pending-count" hx-swap-oob="true">2 pending' in body


def test_the_page_shows_who_approves_what_per_agent(alice, bob, moderator):
    config_update(
        agent=bob.agent, changes={"episodic_approval_consolidation": "automatic"}, changed_by="t"
    )

    page = moderator.get(QUEUE).content.decode()
    rules = page.split('id="approval-rules"')[1].split("</section>")[0]
    alice_row = rules.split("acme/alice")[1].split("</tr>")[0]
    bob_row = rules.split("acme/bob")[1].split("</tr>")[0]

    assert "consolidation" in rules and "[[MEMORY: …]] markers" in rules
    assert alice_row.count("moderator</span>") == 5
    assert bob_row.count("automatic</span>") == 1 and bob_row.count("moderator</span>") == 4


def test_the_config_page_edits_each_approval_rule_and_the_rule_acts(alice, as_role):
    admin = as_role("admin")
    defaults = admin.get("/console/config/").content.decode()
    page = admin.get("/console/config/?level=acme/alice").content.decode()
    for key in ("agent_proposals", "extraction", "consolidation", "memory_actions", "api"):
        assert f"MEMORY_EPISODIC_APPROVAL_{key.upper()}" in defaults
        assert f'name="episodic_approval_{key}"' in page

    refused = admin.post(
        "/console/config/?level=acme/alice",
        {"level": "acme/alice", "expected_version": 0, "episodic_approval_api": "sometimes"},
    ).content.decode()
    admin.post(
        "/console/config/?level=acme/alice",
        {"level": "acme/alice", "expected_version": 0, "episodic_approval_api": "automatic"},
    )

    assert "must be one of moderator, automatic" in refused
    assert MemoryEntry.objects.get(pk=propose(alice, "Tier: gold")).status == "approved"


def test_a_moderator_reads_the_conversation_around_the_evidence_but_not_the_thread(
    alice, moderator
):
    thread = alice.new_thread(resource_id="cust-1")
    said = [{"role": "user", "content": f"Message number {n}."} for n in range(1, 31)]
    said[14] = {"role": "user", "content": "By the way, I moved to Berlin in May."}
    stored = alice.append(thread["id"], *said)
    response = alice.post(
        "/api/v1/episodic",
        {
            "content": "Moved to Berlin in May",
            "resource_id": "cust-1",
            "source": "user_assertion",
            "evidence": "moved to Berlin",
            "message_id": stored[14]["id"],
        },
    )
    entry = response.json()["id"]

    queue = moderator.get(QUEUE).content.decode()
    page = moderator.get(f"{QUEUE}{entry}/conversation/")

    assert f'href="{QUEUE}{entry}/conversation/"' in queue
    assert page.status_code == 200
    body = page.content.decode()
    assert "I <mark>moved to Berlin</mark> in May." in body
    assert "messages #5–#25 of its thread" in body
    assert "Message number 5." in body and "Message number 25." in body
    assert "Message number 4." not in body and "Message number 26." not in body
    assert moderator.get(f"/console/threads/{thread['id']}/").status_code == 403


def test_the_conversation_of_an_entry_without_a_message_says_so(alice, moderator):
    entry = propose(alice, "No transcript behind it")

    body = moderator.get(f"{QUEUE}{entry}/conversation/").content.decode()

    assert "This entry names no message of a thread" in body


def test_approve_all_matching_scales_to_thousands_in_one_update(alice, moderator):
    MemoryEntry.objects.bulk_create(
        MemoryEntry(agent=alice.agent, content=f"Fact {n}", content_hash=f"h{n}", source="api")
        for n in range(3000)
    )

    with CaptureQueriesContext(connection) as queries:
        response = moderator.post(MATCHING, {"action": "approve"}, follow=True)

    assert "Approved 3000 entries matching the filters." in response.content.decode()
    assert not MemoryEntry.objects.filter(status="pending").exists()
    updates = [q["sql"] for q in queries.captured_queries if q["sql"].startswith("UPDATE")]
    assert len([sql for sql in updates if "episodic_memoryentry" in sql]) == 1
    assert AuditEvent.objects.get(action="entry.bulk_approve").after["count"] == 3000


def test_the_whole_page_fetched_by_htmx_after_a_bulk_decision_still_shows_the_rules(
    alice, moderator
):
    page = moderator.get(QUEUE, **HTMX).content.decode()  # as HX-Location fetches it

    assert "acme/alice" in page.split('id="approval-rules"')[1].split("</section>")[0]


def test_approving_all_retires_the_entries_the_approved_ones_supersede(alice, moderator):
    older = propose(alice, "Ships from Rotterdam")
    moderator.post(f"{QUEUE}{older}/approve/")
    response = alice.post(
        "/api/v1/episodic",
        {"content": "Ships from Antwerp now", "resource_id": "cust-1", "supersedes": older},
    )
    newer = response.json()["id"]

    moderator.post(MATCHING, {"action": "approve"})

    assert MemoryEntry.objects.get(pk=newer).status == "approved"
    retired = MemoryEntry.objects.get(pk=older)
    assert retired.status == "superseded" and str(retired.superseded_by_id) == newer
    assert AuditEvent.objects.filter(action="entry.supersede", object_id=older).exists()
