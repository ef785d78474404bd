"""The audit log page: newest first, filters, before/after, escaping, roles."""

import pytest

from apps.audit.services import audit_record
from apps.memconfig.services import config_update

HTMX = {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "audit-list"}


@pytest.fixture
def admin(as_role):
    return as_role("admin", username="ana")


def _events(response):
    return [event.action for event, *_ in response.context["rows"]]


def test_it_lists_console_and_api_changes_newest_first(admin, alice):
    config_update(project=alice.agent.project, changes={"recent_window": 40}, changed_by="user:ana")
    thread = alice.new_thread(title="to delete")
    assert alice.delete(f"/api/v1/threads/{thread['id']}").status_code == 204

    response = admin.get("/console/audit/")

    body = response.content.decode()
    assert _events(response)[:2] == ["thread.delete", "config.update"]
    assert "agent:acme/alice" in body and "user:ana" in body


def test_it_shows_before_and_after_as_a_compact_diff_and_in_full(admin, alice):
    config_update(project=alice.agent.project, changes={"recent_window": 40}, changed_by="ops")
    config_update(
        project=alice.agent.project,
        changes={"recent_window": 50, "short_term_limit": 4},
        changed_by="ops",
    )

    response = admin.get("/console/audit/?action=config.update")

    _, changes, before, after = response.context["rows"][0]
    assert [(c.key, c.before, c.after) for c in changes] == [
        ("recent_window", "40", "50"),
        ("short_term_limit", "", "4"),
    ]
    assert before == '{\n  "recent_window": 40\n}'
    body = response.content.decode()
    assert "<details><summary>Before / after</summary>" in body
    assert "&quot;short_term_limit&quot;: 4" in body


@pytest.mark.parametrize(
    "query, expected",
    [
        ("action=key.create", ["key.create"]),
        ("actor=ANA", ["entry.approve"]),
        ("project={globex}", ["entry.approve"]),
        ("action=key.create&actor=ana", []),
    ],
)
def test_filters_narrow_the_list(admin, alice, carol, query, expected):
    from apps.audit.models import AuditEvent

    AuditEvent.objects.all().delete()
    audit_record(actor="system", action="key.create", object_type="api_key")
    audit_record(
        actor="user:ana",
        action="entry.approve",
        object_type="memory_entry",
        project_id=carol.agent.project.id,
    )

    response = admin.get(f"/console/audit/?{query.format(globex=carol.agent.project.id)}", **HTMX)

    assert _events(response) == expected
    assert response.content.decode().startswith('<section id="audit-list">')


def test_the_action_choice_lists_recorded_actions(admin, alice):
    body = admin.get("/console/audit/").content.decode()

    assert '<option value="key.create">key.create</option>' in body


def test_an_unknown_action_is_told_and_lists_nothing(admin, alice):
    audit_record(actor="system", action="key.create", object_type="api_key")

    response = admin.get("/console/audit/?action=nope")

    assert response.status_code == 400
    body = response.content.decode()
    assert "action=nope: no event has the action nope; choose one from the list." in body
    assert response.context["rows"] == [] and "<table" not in body


@pytest.mark.parametrize(
    "query", ["project=not-a-uuid", "project=00000000-0000-0000-0000-000000000000"]
)
def test_an_unknown_project_filter_is_told(admin, alice, query):
    response = admin.get(f"/console/audit/?{query}", **HTMX)

    assert response.status_code == 400
    assert f"{query}: " in response.content.decode()


def test_a_replaced_short_value_reads_old_arrow_new(admin, alice):
    audit_record(
        actor="user:ana",
        action="entry.approve",
        object_type="memory_entry",
        before={"status": "pending"},
        after={"status": "approved"},
    )

    body = admin.get("/console/audit/").content.decode()

    assert (
        '<del class="diff-before">pending</del><span class="diff-arrow"> → </span>'
        '<ins class="diff-after">approved</ins>'
    ) in body
    assert "pending</del><ins" not in body


def test_the_list_paginates(admin):
    for number in range(30):
        audit_record(actor="system", action="test.event", object_type="x", summary=f"n{number}")

    first = admin.get("/console/audit/")
    second = admin.get("/console/audit/?page=2")

    assert first.context["rows"][0][0].summary == "n29"
    assert len(second.context["rows"]) == 5
    assert "page=2" in first.content.decode()


def test_stored_text_renders_escaped(admin):
    audit_record(
        actor="<script>alert(1)</script>",
        action="entry.edit",
        object_type="memory_entry",
        summary="<script>alert(2)</script>",
        before={"content": "<script>alert(3)</script>"},
        after={"content": "<b>x</b>"},
    )

    body = admin.get("/console/audit/").content.decode()

    assert "<script>alert" not in body and "<b>x</b>" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in body
    assert "&lt;script&gt;alert(3)&lt;/script&gt;" in body


def test_without_events_it_says_what_appears_here(admin):
    body = admin.get("/console/audit/").content.decode()

    assert "No events match" in body


@pytest.mark.parametrize("role", ["operator", "curator", "moderator"])
def test_other_roles_get_403(as_role, role):
    assert as_role(role).get("/console/audit/").status_code == 403


def test_an_edit_shows_the_words_it_changed_even_deep_in_a_long_text(admin, alice):
    filler = " ".join(f"word{n}" for n in range(80))
    thread = alice.new_thread()
    put = {"objective": f"{filler} ship on Friday {filler}", "decisions": [], "state": "",
           "follow_ups": [], "version": 0}  # fmt: skip
    url = f"/api/v1/threads/{thread['id']}/session-memory"
    assert alice.put(url, put).status_code in (200, 201)
    put.update(version=1, objective=f"{filler} ship on Monday {filler}")
    assert alice.put(url, put).status_code == 200

    response = admin.get("/console/audit/?action=session_memory.write")

    _, changes, *_ = response.context["rows"][0]
    objective = next(change for change in changes if change.key == "objective")
    at = objective.words.index(("del", "Friday"))
    assert objective.words[at : at + 3] == [("del", "Friday"), ("arrow", " → "), ("ins", "Monday")]
    assert ("gap", "…") in objective.words  # the unchanged stretches are elided, not the change
    body = response.content.decode()
    assert (
        '<del class="diff-before">Friday</del><span class="diff-arrow"> → </span>'
        '<ins class="diff-after">Monday</ins>'
    ) in body


def test_a_resumed_checkpoint_records_who_resumed_it_with_what_input(admin, alice):
    thread = alice.new_thread()
    run = alice.post(f"/api/v1/threads/{thread['id']}/runs", {"name": "refund"}).json()
    checkpoint = alice.post(
        f"/api/v1/runs/{run['id']}/checkpoints", {"state": {"step": 2}, "reason": "approve"}
    ).json()
    resumed = alice.post(f"/api/v1/checkpoints/{checkpoint['id']}/resume", {"input": {"ok": True}})
    assert resumed.status_code == 200, resumed.content

    page = admin.get(f"/console/threads/{thread['id']}/").content.decode()

    checkpoints = page[page.index('id="thread-checkpoints"') : page.index('id="thread-snapshots"')]
    assert "by <strong>agent:acme/alice</strong>" in checkpoints
    assert "&quot;ok&quot;: true" in checkpoints and "&quot;step&quot;: 2" in checkpoints
