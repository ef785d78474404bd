"""The moderation queue: agents propose entries through the API, moderators judge them here."""

import pytest

from apps.audit.models import AuditEvent
from apps.episodic.models import MemoryEntry
from apps.memconfig.services import config_update

QUEUE = "/console/moderation/"
HTMX = {"HTTP_HX_REQUEST": "true"}


def _propose(actor, content, *, said=None, evidence=None, resource_id="cust-1") -> dict:
    """Propose an entry; with `said`, a user message says it and `evidence` quotes it."""
    body = {"content": content, "resource_id": resource_id}
    if said is not None:
        thread = actor.new_thread(resource_id=resource_id)
        [message] = actor.append(thread["id"], {"role": "user", "content": said})
        body.update(source="user_assertion", evidence=evidence, message_id=message["id"])
    response = actor.post("/api/v1/episodic", body)
    assert response.status_code == 201, response.content
    return response.json()


def _recalled(actor, query) -> list[str]:
    response = actor.post("/api/v1/episodic/recall", {"query": query})
    return [result["content"] for result in response.json()["results"]]


def _actions(entry_id) -> list[str]:
    return list(
        AuditEvent.objects.filter(object_id=str(entry_id))
        .order_by("id")
        .values_list("action", flat=True)
    )


@pytest.fixture
def moderator(as_role):
    return as_role("moderator")


def test_it_lists_pending_entries_with_their_evidence_marked_in_the_source_message(alice, as_role):
    entry = _propose(
        alice,
        "Customer moved to Berlin",
        said="Hi, just so you know I moved to Berlin in May.",
        evidence="moved to Berlin",
    )

    page = as_role("moderator", "operator").get(QUEUE).content.decode()

    assert f'id="entry-{entry["id"]}"' in page
    assert "Customer moved to Berlin" in page
    assert "Hi, just so you know I <mark>moved to Berlin</mark> in May." in page
    message = MemoryEntry.objects.get(pk=entry["id"]).message
    assert f"/console/threads/{message.thread_id}/?seq={message.seq}#m-{message.seq}" in page
    assert "user_assertion" in page
    assert "acme/alice" in page
    assert "cust-1" in page
    assert '<span class="badge pending">pending</span>' in page


def test_a_moderator_without_the_operator_role_reads_the_messages_around_the_evidence(
    alice, moderator
):
    thread = alice.new_thread(resource_id="cust-1")
    messages = alice.append(
        thread["id"],
        {"role": "user", "content": "Where do my invoices go?"},
        {"role": "assistant", "content": "To billing@old.example, by post too."},
        {"role": "user", "content": "Please use email only."},
        {"role": "assistant", "content": "Noted: email only from now on."},
    )
    alice.post(
        "/api/v1/episodic",
        {
            "content": "Prefers email",
            "resource_id": "cust-1",
            "source": "user_assertion",
            "evidence": "email only",
            "message_id": messages[2]["id"],
        },
    )

    page = moderator.get(QUEUE).content.decode()

    assert "<mark>email only</mark>" in page
    for said in ("Where do my invoices go?", "To billing@old.example", "Noted: email only"):
        assert said in page
    assert "/console/threads/" not in page


def test_message_and_entry_text_render_inert(alice, moderator):
    said = "Note <script>alert(1)</script> and <b>bold</b> claims"
    _propose(
        alice,
        "<script>alert(2)</script> entry text",
        said=said,
        evidence="<script>alert(1)</script> and <b>bold</b>",
    )

    page = moderator.get(QUEUE).content.decode()

    assert "<script>alert" not in page
    assert "<b>bold" not in page
    assert "&lt;script&gt;alert(2)&lt;/script&gt; entry text" in page
    assert (
        "Note <mark>&lt;script&gt;alert(1)&lt;/script&gt; and &lt;b&gt;bold&lt;/b&gt;</mark> claims"
        in page
    )


def test_it_shows_similar_entries_of_the_same_agent_and_resource(
    alice, bob, moderator, use_embedder
):
    run_jobs = use_embedder(alice)
    config_update(
        project=alice.agent.project, changes={"episodic_dedupe_threshold": 1.0}, changed_by="t"
    )
    entry = _propose(alice, "Invoices are emailed on the first of the month")
    _propose(alice, "Invoices are emailed on the first business day")
    _propose(alice, "Invoices are emailed weekly", resource_id="cust-2")
    _propose(bob, "Invoices are emailed on the first of each month")
    run_jobs()

    response = moderator.get(QUEUE, {"resource": "cust-1", "agent": str(alice.agent.id)})
    row = _row(response.content.decode(), entry["id"])
    # The row loads its similar entries as it is shown (they cost an embedding each).
    assert f'hx-get="{QUEUE}{entry["id"]}/similar/" hx-trigger="revealed"' in row

    similar = moderator.get(f"{QUEUE}{entry['id']}/similar/", **HTMX).content.decode()
    assert f'id="similar-{entry["id"]}"' in similar
    assert "Invoices are emailed on the first business day" in similar
    assert "similarity 0." in similar
    assert "Invoices are emailed on the first of the month" not in similar  # not itself
    assert "weekly" not in similar  # another resource
    assert "of each month" not in similar  # another agent


def test_without_vectors_it_says_why_there_are_no_similar_entries(alice, moderator):
    entry = _propose(alice, "Invoices are emailed on the first of the month")
    _propose(alice, "Invoices are emailed on the first business day")

    similar = moderator.get(f"{QUEUE}{entry['id']}/similar/").content.decode()

    assert "Similar entries are not shown: no embedder serves this project" in similar
    assert "first business day" not in similar


def test_filters_default_to_pending_and_narrow_by_agent_resource_and_status(alice, bob, moderator):
    mine = _propose(alice, "Alice entry for cust-1")
    _propose(alice, "Alice entry for cust-2", resource_id="cust-2")
    _propose(bob, "Bob entry for cust-1")
    approved = _propose(alice, "Approved alice entry")
    moderator.post(f"{QUEUE}{approved['id']}/approve/")

    def shown(**params):
        page = moderator.get(QUEUE, params).content.decode()
        return sorted(e.content for e in MemoryEntry.objects.all() if f"entry-{e.id}" in page)

    assert shown() == ["Alice entry for cust-1", "Alice entry for cust-2", "Bob entry for cust-1"]
    assert shown(agent=alice.agent.id, resource="cust-1") == ["Alice entry for cust-1"]
    assert shown(status="approved") == ["Approved alice entry"]
    assert len(shown(status="")) == 4
    assert shown(resource="nobody") == []
    assert mine["status"] == "pending"


def test_an_empty_queue_says_what_to_do(moderator):
    page = moderator.get(QUEUE, {"status": "pending"}).content.decode()

    assert "Nothing waits for moderation" in page
    assert "POST /api/v1/episodic" in page


def test_a_bad_filter_value_is_reported_and_the_rest_still_applies(alice, moderator):
    _propose(alice, "Something pending")

    response = moderator.get(QUEUE, {"agent": "not-an-id"})

    assert response.status_code == 200
    assert "“not-an-id” is not a valid UUID." in response.content.decode()
    assert "Something pending" in response.content.decode()


def test_the_list_paginates(alice, moderator):
    for n in range(27):
        _propose(alice, f"Fact number {n} about the customer")

    first = moderator.get(QUEUE).content.decode()
    second = moderator.get(QUEUE, {"page": 2}).content.decode()

    assert first.count('class="card entry"') == 25
    assert second.count('class="card entry"') == 2
    assert "Page 2 of 2 (27)" in second


def test_htmx_filtering_returns_just_the_list(alice, moderator):
    _propose(alice, "A pending entry")

    response = moderator.get(QUEUE, {"status": "pending"}, **HTMX, HTTP_HX_TARGET="entry-list")

    body = response.content.decode()
    assert body.startswith('<section id="entry-list">')
    assert "A pending entry" in body
    assert "<html" not in body


def test_approving_makes_the_entry_recallable_and_is_audited(alice, moderator):
    entry = _propose(alice, "Renewal unlocks after the entitlement sync")
    assert _recalled(alice, "renewal entitlement sync") == []

    response = moderator.post(f"{QUEUE}{entry['id']}/approve/?status=pending")

    assert response.status_code == 302
    assert response["Location"] == f"{QUEUE}?status=pending"
    assert MemoryEntry.objects.get(pk=entry["id"]).status == "approved"
    assert _recalled(alice, "renewal entitlement sync") == [
        "Renewal unlocks after the entitlement sync"
    ]
    event = AuditEvent.objects.get(object_id=entry["id"], action="entry.approve")
    assert event.actor == "user:moderator"
    assert event.before["status"] == "pending"
    assert event.after["status"] == "approved"


def test_an_htmx_approval_drops_the_row_from_the_pending_list(alice, moderator):
    entry = _propose(alice, "Ships from Rotterdam")

    response = moderator.post(
        f"{QUEUE}{entry['id']}/approve/", **HTMX, HTTP_HX_TARGET=f"entry-{entry['id']}"
    )

    body = response.content.decode()
    assert response.status_code == 200
    assert "entry-" not in body
    assert 'id="messages" class="messages" hx-swap-oob="true"' in body
    assert "Approved “Ships from Rotterdam”." in body


def test_an_htmx_approval_with_any_status_shown_returns_the_updated_row(alice, moderator):
    entry = _propose(alice, "Ships from Rotterdam")

    response = moderator.post(
        f"{QUEUE}{entry['id']}/approve/?status=", **HTMX, HTTP_HX_TARGET=f"entry-{entry['id']}"
    )

    body = response.content.decode().strip()
    assert body.startswith(f'<article class="card entry" id="entry-{entry["id"]}">')
    assert '<span class="badge approved">approved</span>' in body
    assert "/approve/" not in body  # already approved: no approve button


def test_rejecting_keeps_the_entry_out_of_recall_and_is_audited(alice, moderator):
    entry = _propose(alice, "Uses the legacy billing portal")

    moderator.post(f"{QUEUE}{entry['id']}/reject/")

    assert MemoryEntry.objects.get(pk=entry["id"]).status == "rejected"
    assert _recalled(alice, "legacy billing portal") == []
    assert _actions(entry["id"]) == ["entry.create", "entry.reject"]


def test_deleting_removes_the_entry_and_is_audited(alice, moderator):
    entry = _propose(alice, "Temporary note")

    response = moderator.post(f"{QUEUE}{entry['id']}/delete/", **HTMX)

    assert response.status_code == 200
    assert "entry-" not in response.content.decode()
    assert not MemoryEntry.objects.filter(pk=entry["id"]).exists()
    assert _actions(entry["id"]) == ["entry.create", "entry.delete"]


def test_delete_and_bulk_actions_ask_for_confirmation(alice, moderator):
    _propose(alice, "Temporary note")

    page = moderator.get(QUEUE).content.decode()

    assert 'hx-confirm="Delete this entry for good?' in page
    assert 'id="bulk-form"' in page
    assert 'hx-confirm="Apply the chosen action to every selected entry?"' in page


def test_edit_opens_an_inline_form_with_the_content(alice, moderator):
    entry = _propose(alice, "Customer is on the <gold> plan")

    response = moderator.get(
        f"{QUEUE}{entry['id']}/edit/", **HTMX, HTTP_HX_TARGET=f"entry-{entry['id']}"
    )

    body = response.content.decode().strip()
    assert body.startswith(f'<article class="card entry" id="entry-{entry["id"]}">')
    assert "<textarea" in body
    assert "Customer is on the &lt;gold&gt; plan</textarea>" in body
    assert "Save and approve" in body
    cancel = moderator.get(f"{QUEUE}{entry['id']}/", **HTMX).content.decode()
    assert "<textarea" not in cancel


def test_saving_an_edit_changes_the_content_then_approves_it(alice, moderator):
    entry = _propose(alice, "Customr is on the gold plan")

    response = moderator.post(
        f"{QUEUE}{entry['id']}/edit/?status=",
        {"content": "Customer is on the gold plan"},
        **HTMX,
        HTTP_HX_TARGET=f"entry-{entry['id']}",
    )

    stored = MemoryEntry.objects.get(pk=entry["id"])
    assert (stored.content, stored.status) == ("Customer is on the gold plan", "approved")
    assert '<span class="badge approved">approved</span>' in response.content.decode()
    assert _actions(entry["id"]) == ["entry.create", "entry.edit", "entry.approve"]
    edit = AuditEvent.objects.get(object_id=entry["id"], action="entry.edit")
    assert edit.before["content"] == "Customr is on the gold plan"
    assert edit.after["content"] == "Customer is on the gold plan"
    assert _recalled(alice, "customer gold plan") == ["Customer is on the gold plan"]


@pytest.mark.parametrize(
    "content, message",
    [
        ("", "Content must not be blank"),
        ("   \n ", "Content must not be blank"),
        ("Invoices go out monthly", "already says this"),
    ],
)
def test_a_refused_edit_says_why_and_changes_nothing(alice, moderator, content, message):
    _propose(alice, "Invoices go out monthly")
    entry = _propose(alice, "Invoices go out every month")

    response = moderator.post(
        f"{QUEUE}{entry['id']}/edit/", {"content": content}, **HTMX, HTTP_HX_TARGET="x"
    )

    body = response.content.decode()
    assert response.status_code == 200
    assert message in body
    assert "<textarea" in body
    stored = MemoryEntry.objects.get(pk=entry["id"])
    assert (stored.content, stored.status) == ("Invoices go out every month", "pending")
    assert _actions(entry["id"]) == ["entry.create"]


def test_a_bulk_action_applies_to_the_selected_entries_and_reports_how_many(alice, moderator):
    first, second, third = (_propose(alice, f"Bulk entry {word}") for word in ("one", "two", "3"))

    response = moderator.post(
        QUEUE, {"action": "approve", "entries": [first["id"], second["id"]]}, follow=True
    )

    statuses = dict(MemoryEntry.objects.values_list("content", "status"))
    assert statuses == {
        "Bulk entry one": "approved",
        "Bulk entry two": "approved",
        "Bulk entry 3": "pending",
    }
    page = response.content.decode()
    assert "Approved 2 entries." in page
    assert f"entry-{third['id']}" in page and f"entry-{first['id']}" not in page
    assert AuditEvent.objects.filter(action="entry.approve").count() == 2


def test_a_bulk_action_counts_only_entries_it_changed(alice, moderator):
    first, second = (_propose(alice, f"Bulk entry {word}") for word in ("one", "two"))
    moderator.post(f"{QUEUE}{first['id']}/reject/")

    response = moderator.post(
        f"{QUEUE}?status=",
        {"action": "reject", "entries": [first["id"], second["id"]]},
        **HTMX,
        HTTP_HX_TARGET="entry-list",
    )

    body = response.content.decode()
    assert body.startswith('<section id="entry-list">')
    assert "Rejected 1 entry; 1 already had that status." in body
    assert AuditEvent.objects.filter(action="entry.reject").count() == 2


def test_a_bulk_delete_removes_the_selected_entries(alice, moderator):
    first, second = (_propose(alice, f"Bulk entry {word}") for word in ("one", "two"))

    response = moderator.post(
        QUEUE, {"action": "delete", "entries": [first["id"]]}, **HTMX, HTTP_HX_TARGET="entry-list"
    )

    assert "Deleted 1 entry." in response.content.decode()
    assert list(MemoryEntry.objects.values_list("id", flat=True)) == [
        MemoryEntry.objects.get(pk=second["id"]).id
    ]
    assert _actions(first["id"]) == ["entry.create", "entry.delete"]


@pytest.mark.parametrize(
    "data, message",
    [
        ({"action": "approve"}, "Select at least one entry first"),
        ({"action": "", "entries": ["ENTRY"]}, "Choose what to do with the selected entries."),
        ({"action": "purge", "entries": ["ENTRY"]}, "Select a valid choice"),
        ({"action": "approve", "entries": ["01a2-not-a-uuid"]}, "is not a valid UUID"),
        (
            {"action": "approve", "entries": ["01a1dc36-0000-7000-8000-000000000000"]},
            "A selected entry no longer exists",
        ),
    ],
)
def test_bad_bulk_input_is_reported_and_changes_nothing(alice, moderator, data, message):
    entry = _propose(alice, "Still pending")
    if data.get("entries") == ["ENTRY"]:
        data = {**data, "entries": [entry["id"]]}

    response = moderator.post(QUEUE, data, follow=True)

    assert message in response.content.decode()
    assert MemoryEntry.objects.get(pk=entry["id"]).status == "pending"
    assert _actions(entry["id"]) == ["entry.create"]


def test_acting_on_an_entry_someone_deleted_drops_its_row_with_a_message(alice, moderator):
    entry = _propose(alice, "Soon gone")
    moderator.post(f"{QUEUE}{entry['id']}/delete/")

    response = moderator.post(f"{QUEUE}{entry['id']}/approve/", **HTMX)

    assert response.status_code == 200
    assert "That entry no longer exists" in response.content.decode()
    assert moderator.get(f"{QUEUE}{entry['id']}/").status_code == 302


def test_without_htmx_an_entry_has_a_page_of_its_own_with_plain_forms(alice, moderator):
    entry = _propose(alice, "Prefers phone calls")

    page = moderator.get(f"{QUEUE}{entry['id']}/edit/?status=pending").content.decode()

    assert "<h1>Memory entry</h1>" in page
    assert '<div class="standalone" hx-disable>' in page
    assert f'action="{QUEUE}{entry["id"]}/edit/?status=pending"' in page
    response = moderator.post(
        f"{QUEUE}{entry['id']}/edit/?status=pending", {"content": "Prefers phone calls, mornings"}
    )
    assert response.status_code == 302
    assert response["Location"] == f"{QUEUE}?status=pending"


@pytest.mark.parametrize("role", ["operator", "curator"])
def test_other_roles_can_neither_see_nor_moderate(alice, as_role, role):
    entry = _propose(alice, "Moderators only")
    client = as_role(role)

    assert client.get(QUEUE).status_code == 403
    assert client.get(f"{QUEUE}{entry['id']}/").status_code == 403
    for action in ("approve", "reject", "delete", "edit"):
        assert client.post(f"{QUEUE}{entry['id']}/{action}/", {"content": "x"}).status_code == 403
    assert client.post(QUEUE, {"action": "delete", "entries": [entry["id"]]}).status_code == 403
    assert MemoryEntry.objects.get(pk=entry["id"]).status == "pending"


def test_actions_only_accept_post(alice, moderator):
    entry = _propose(alice, "Pending")

    for action in ("approve", "reject", "delete"):
        assert moderator.get(f"{QUEUE}{entry['id']}/{action}/").status_code == 405


def test_every_post_needs_the_csrf_token(alice, csrf_client):
    entry = _propose(alice, "Pending")
    client = csrf_client()

    for action in ("approve", "reject", "delete", "edit"):
        response = client.post(f"{QUEUE}{entry['id']}/{action}/", {"content": "x"}, **HTMX)
        assert response.status_code == 403
    assert client.post(QUEUE, {"action": "approve", "entries": [entry["id"]]}).status_code == 403
    assert MemoryEntry.objects.get(pk=entry["id"]).status == "pending"
    assert _actions(entry["id"]) == ["entry.create"]


def _row(page: str, entry_id: str) -> str:
    start = page.index(f'id="entry-{entry_id}"')
    return page[start : page.index("</article>", start)]


def test_approving_an_entry_next_to_its_live_twin_says_why_it_cannot(alice, moderator):
    first = _propose(alice, "Customer prefers email")
    MemoryEntry.objects.filter(pk=first["id"]).update(status="rejected")
    rejected = MemoryEntry.objects.get(pk=first["id"])
    MemoryEntry.objects.create(  # a live copy, as an operator's edit could make one
        agent=rejected.agent,
        resource=rejected.resource,
        content=rejected.content,
        content_hash=rejected.content_hash,
        source=rejected.source,
        status="approved",
    )

    single = moderator.post(f"{QUEUE}{first['id']}/approve/", **HTMX)
    bulk = moderator.post(QUEUE, {"action": "approve", "entries": [first["id"]]}, **HTMX)

    for response in (single, bulk):
        assert response.status_code == 200
        assert "already says this; reject or delete one of them first" in (
            response.content.decode()
        )
    assert MemoryEntry.objects.get(pk=first["id"]).status == "rejected"


def _pending_badge(body: str) -> str:
    marker = '<span class="badge pending" id="pending-count" hx-swap-oob="true">'
    return body.split(marker)[1].split("</span>")[0]


def test_an_htmx_action_updates_the_pending_count_out_of_band(alice, moderator):
    first = _propose(alice, "Ships from Rotterdam")
    second = _propose(alice, "Ships from Antwerp")
    _propose(alice, "Ships from Hamburg")
    assert '<span class="badge pending" id="pending-count">3 pending</span>' in (
        moderator.get(QUEUE).content.decode()
    )

    approved = moderator.post(f"{QUEUE}{first['id']}/approve/", **HTMX).content.decode()
    deleted = moderator.post(f"{QUEUE}{second['id']}/delete/", **HTMX).content.decode()

    assert _pending_badge(approved) == "2 pending"
    assert _pending_badge(deleted) == "1 pending"


def test_a_bulk_action_updates_the_pending_count_out_of_band(alice, moderator):
    entries = [_propose(alice, f"Ships from port {n}") for n in range(3)]

    body = moderator.post(
        QUEUE,
        {"action": "approve", "entries": [entries[0]["id"], entries[1]["id"]]},
        **HTMX,
    ).content.decode()

    assert _pending_badge(body) == "1 pending"


def test_the_acted_on_entrys_similar_badges_follow_where_rows_show_it(alice, moderator):
    shown = _propose(alice, "Ships from Rotterdam")
    other = _propose(alice, "Ships from Antwerp")

    approved = moderator.post(
        f"{QUEUE}{shown['id']}/approve/?status=", {"shown": [shown["id"]]}, **HTMX
    ).content.decode()
    deleted = moderator.post(
        f"{QUEUE}{other['id']}/delete/", {"shown": [other["id"]]}, **HTMX
    ).content.decode()
    unseen = moderator.post(f"{QUEUE}{shown['id']}/reject/?status=", **HTMX).content.decode()

    badge = f'hx-swap-oob="outerHTML:.sim-status-{shown["id"]}">approved</span>'
    assert f'<span class="badge approved sim-status-{shown["id"]}" {badge}' in approved
    assert f'hx-swap-oob="outerHTML:.sim-status-{other["id"]}">deleted</span>' in deleted
    assert "sim-status-" not in unseen  # no row on the page shows it: nothing to swap


def test_rows_show_similar_badges_that_actions_send_back(alice, moderator, use_embedder):
    run_jobs = use_embedder(alice)
    config_update(
        project=alice.agent.project, changes={"episodic_dedupe_threshold": 1.0}, changed_by="t"
    )
    first = _propose(alice, "Invoices are emailed on the first of the month")
    second = _propose(alice, "Invoices are emailed on the first business day")
    run_jobs()

    row = _row(moderator.get(QUEUE).content.decode(), first["id"])
    similar = moderator.get(f"{QUEUE}{first['id']}/similar/", **HTMX).content.decode()

    assert f'class="shown-similar" name="shown" value="{second["id"]}"' in similar
    assert f'sim-status-{second["id"]}">pending</span>' in similar
    assert row.count('hx-include="#pending-count, .shown-similar"') == 3  # approve, reject, delete


def test_edit_then_approve_refuses_a_near_duplicate_like_the_api(alice, moderator, use_embedder):
    run_jobs = use_embedder(alice)
    kept = _propose(alice, "Invoices are emailed on the first of the month")
    entry = _propose(alice, "Printer jams on tray two")
    run_jobs()

    response = moderator.post(
        f"{QUEUE}{entry['id']}/edit/",
        {"content": "Invoices are emailed on the first of the month!"},
        **HTMX,
    )

    body = response.content.decode()
    assert kept["id"] in body and "episodic_dedupe_threshold" in body
    stored = MemoryEntry.objects.get(pk=entry["id"])
    assert (stored.content, stored.status) == ("Printer jams on tray two", "pending")


def test_edit_then_approve_refuses_when_the_evidence_is_gone_from_its_message(alice, moderator):
    from apps.threads.models import Message

    entry = _propose(
        alice, "Customer moved to Berlin", said="I moved to Berlin in May.", evidence="Berlin"
    )
    Message.objects.filter(pk=MemoryEntry.objects.get(pk=entry["id"]).message_id).update(
        content="(redacted)"
    )

    response = moderator.post(
        f"{QUEUE}{entry['id']}/edit/", {"content": "Customer lives in Berlin"}, **HTMX
    )

    assert "evidence: not found verbatim" in response.content.decode()
    assert MemoryEntry.objects.get(pk=entry["id"]).status == "pending"


def test_an_extracted_entry_shows_its_turn_with_the_evidence_marked(alice, moderator, settings):
    import json

    from apps.jobs.services import job_run_pending
    from apps.providers.fake_openai import FakeOpenAIServer

    with FakeOpenAIServer() as server:
        settings.OPENAI_BASE_URL, settings.OPENAI_API_KEY = server.base_url, "sk-test"
        settings.OPENAI_MAX_RETRIES = 0
        evidence = "record A holds the subscription"
        answer = {"content": "Record A held it.", "source": "user_assertion", "evidence": evidence}
        server.script(json.dumps({"entries": []}), json.dumps({"entries": [answer]}))
        thread = alice.new_thread(resource_id="cust-1")
        alice.append(
            thread["id"],
            {"role": "user", "content": "Still locked."},
            {"role": "assistant", "content": "Which record holds it?"},
        )
        alice.append(
            thread["id"],
            {"role": "user", "content": f"I checked: {evidence}, B is checked."},
            {"role": "assistant", "content": "Then merging A and B fixes it."},
        )
        job_run_pending()
        page = moderator.get(QUEUE).content.decode()

    entry = MemoryEntry.objects.get()
    row = _row(page, entry.id)
    assert f"I checked: <mark>{evidence}</mark>, B is checked." in row
    assert "Then merging A and B fixes it." in row  # the rest of its turn
    assert "Still locked." not in row  # an earlier turn
    assert "from the turn #3–#4" in row
