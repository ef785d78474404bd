import pytest

from apps.memconfig.services import config_update
from apps.tenancy.models import Resource


def _thread_with(actor, *turns):
    thread = actor.new_thread(resource_id="cust-1")
    messages = actor.append(
        thread["id"], *[{"role": role, "content": text} for role, text in turns]
    )
    return thread, messages


def test_an_agent_proposal_starts_pending_and_is_not_recalled(alice):
    thread, [user, _] = _thread_with(
        alice,
        ("user", "Renewal worked but the workspace is still locked."),
        (
            "assistant",
            "The active subscription is on record A, but entitlement checks read record B.",
        ),
    )

    response = alice.post(
        "/api/v1/episodic",
        {
            "content": "Workspace locked after renewal: subscription on A, checks read B.",
            "resource_id": "cust-1",
            "source": "verified_assistant_finding",
            "evidence": "entitlement checks read record B",
            "thread_id": thread["id"],
        },
    )

    assert response.status_code == 201
    entry = response.json()
    assert entry["status"] == "pending"
    assert entry["message_id"] is not None and entry["message_id"] != user["id"]
    recalled = alice.post("/api/v1/episodic/recall", {"query": "workspace locked renewal"}).json()
    assert recalled["results"] == []


def test_with_approval_off_entries_are_approved_and_recalled_with_signals(alice):
    config_update(
        agent=alice.agent, changes={"episodic_approval_required": False}, changed_by="ops"
    )
    alice.post(
        "/api/v1/episodic",
        {"content": "Matcher expected tier=enterprise-plus", "resource_id": "cust-1"},
    )
    alice.post(
        "/api/v1/episodic", {"content": "Invoices are sent on the first", "resource_id": "cust-1"}
    )

    body = alice.post(
        "/api/v1/episodic/recall",
        {"query": "enterprise-plus tier matcher", "resource_id": "cust-1"},
    ).json()

    assert [r["content"] for r in body["results"]] == ["Matcher expected tier=enterprise-plus"]
    assert body["results"][0]["signals"]["lexical"]["rank"] == 1
    listed = alice.get("/api/v1/episodic", {"status": "approved"}).json()["results"]
    recalled = next(e for e in listed if e["content"].startswith("Matcher"))
    assert recalled["recall_count"] == 1
    assert recalled["last_recalled_at"] is not None


def test_evidence_must_occur_verbatim_in_the_named_message(alice):
    thread, [user] = _thread_with(alice, ("user", "The export fails with error 413."))

    response = alice.post(
        "/api/v1/episodic",
        {
            "content": "Exports fail with 413",
            "source": "user_assertion",
            "evidence": "export fails with error 500",
            "message_id": user["id"],
        },
    )

    assert response.status_code == 422
    assert "not found verbatim" in response.json()["error"]["message"]


def test_user_sourced_evidence_must_come_from_a_user_message(alice):
    thread, [_, assistant] = _thread_with(
        alice, ("user", "It broke."), ("assistant", "The cache key ignores the locale.")
    )

    response = alice.post(
        "/api/v1/episodic",
        {
            "content": "Cache key ignores locale",
            "source": "user_assertion",
            "evidence": "The cache key ignores the locale.",
            "message_id": assistant["id"],
        },
    )

    assert response.status_code == 422


@pytest.mark.parametrize(
    "body, says",
    [
        ({"content": "x", "source": "user_assertion"}, "evidence: required"),
        (
            {"content": "x", "source": "user_assertion", "evidence": "x"},
            "evidence: name the message_id",
        ),
        ({"content": "   "}, "content"),
        ({"content": "x", "source": "operator"}, "source"),
        ({"content": "x", "status": "approved"}, "status"),
    ],
)
def test_it_rejects_bad_entries(alice, body, says):
    response = alice.post("/api/v1/episodic", body)

    assert response.status_code == 400
    assert says in response.json()["error"]["message"]


def test_content_over_the_configured_length_is_refused_not_cut(alice):
    config_update(agent=alice.agent, changes={"episodic_max_entry_length": 50}, changed_by="ops")

    response = alice.post("/api/v1/episodic", {"content": "y" * 51})

    assert response.status_code == 400
    assert "limit (episodic_max_entry_length) is 50" in response.json()["error"]["message"]


def test_an_exact_duplicate_in_the_same_scope_is_stored_once(alice):
    first = alice.post("/api/v1/episodic", {"content": "The VPN drops at 5pm", "resource_id": "r"})
    again = alice.post(
        "/api/v1/episodic", {"content": "  the vpn   drops at 5pm ", "resource_id": "r"}
    )
    elsewhere = alice.post(
        "/api/v1/episodic", {"content": "The VPN drops at 5pm", "resource_id": "other"}
    )

    assert first.status_code == 201
    assert again.status_code == 200
    assert again.json()["id"] == first.json()["id"]
    assert again.json()["duplicate_of"] == "hash"
    assert elsewhere.status_code == 201


def test_a_near_duplicate_is_caught_by_similarity(alice, use_embedder):
    run_jobs = use_embedder(alice, dims=256)
    first = alice.post(
        "/api/v1/episodic",
        {"content": "The nightly backup job fails because the disk is full", "resource_id": "r"},
    )
    run_jobs()

    near = alice.post(
        "/api/v1/episodic",
        {"content": "The nightly backup job fails because the disk is full!", "resource_id": "r"},
    )
    different = alice.post(
        "/api/v1/episodic",
        {"content": "Password resets email the wrong address", "resource_id": "r"},
    )

    assert near.status_code == 200
    assert near.json()["id"] == first.json()["id"]
    assert near.json()["duplicate_of"] == "similarity"
    assert near.json()["similarity"] >= 0.86
    assert different.status_code == 201


def test_it_deletes_an_entry_and_filters_the_list(alice):
    keep = alice.post(
        "/api/v1/episodic", {"content": "keep me", "resource_id": "a", "kind": "fact"}
    ).json()
    gone = alice.post("/api/v1/episodic", {"content": "delete me", "resource_id": "b"}).json()

    assert alice.delete(f"/api/v1/episodic/{gone['id']}").status_code == 204
    assert alice.get(f"/api/v1/episodic/{gone['id']}").status_code == 404
    assert [e["id"] for e in alice.get("/api/v1/episodic", {"kind": "fact"}).json()["results"]] == [
        keep["id"]
    ]
    assert alice.get("/api/v1/episodic", {"status": "bogus"}).status_code == 400


@pytest.mark.parametrize("source", ["api", "verified_assistant_finding"])
def test_evidence_that_names_a_message_must_occur_verbatim_in_it_whatever_the_source(alice, source):
    _, [user, assistant] = _thread_with(
        alice, ("user", "Uploads over 10 MB fail."), ("assistant", "The proxy caps bodies at 10m.")
    )
    entry = {"content": "Uploads fail: the proxy caps bodies at 10m", "source": source}

    wrong = alice.post(
        "/api/v1/episodic",
        {**entry, "evidence": "caps bodies at 20m", "message_id": assistant["id"]},
    )
    right = alice.post(
        "/api/v1/episodic",
        {**entry, "evidence": "caps bodies at 10m", "message_id": assistant["id"]},
    )

    assert wrong.status_code == 422
    error = wrong.json()["error"]
    assert error["code"] == "unprocessable"
    assert f"not found verbatim in message {assistant['id']}" in error["message"]
    assert right.status_code == 201, right.content
    assert right.json()["message_id"] == assistant["id"]


def test_an_operator_entry_that_names_a_message_must_quote_it(alice):
    from apps.core.errors import Unprocessable
    from apps.episodic.services import entry_create
    from apps.threads.models import Message

    _, [user] = _thread_with(alice, ("user", "The nightly export skips archived rows."))
    message = Message.objects.get(pk=user["id"])

    with pytest.raises(Unprocessable, match="not found verbatim"):
        entry_create(
            agent=alice.agent,
            resource=None,
            content="Exports skip archived rows",
            source="operator",
            evidence="skips deleted rows",
            message=message,
            actor="operator:ops",
            by_operator=True,
        )


@pytest.mark.parametrize("first, second", [(None, "r"), ("r", None)])
def test_an_entry_without_a_resource_is_not_deduped_against_a_resources_entry(
    alice, use_embedder, first, second
):
    run_jobs = use_embedder(alice, dims=256)
    text = "The nightly backup job fails because the disk is full"
    earlier = alice.post("/api/v1/episodic", _with_resource({"content": text}, first))
    run_jobs()

    copy = alice.post("/api/v1/episodic", _with_resource({"content": text}, second))
    run_jobs()
    near = alice.post("/api/v1/episodic", _with_resource({"content": text + "!"}, second))

    assert earlier.status_code == copy.status_code == 201, copy.content
    assert copy.json()["id"] != earlier.json()["id"]
    assert copy.json()["resource_id"] == second
    assert near.status_code == 200  # ...while the same scope still dedupes by similarity
    assert near.json()["duplicate_of"] == "similarity"
    assert near.json()["id"] == copy.json()["id"]


def _with_resource(body, resource_id):
    return {**body, "resource_id": resource_id} if resource_id else body


def test_an_evidence_error_names_the_source_by_its_value(alice):
    thread, [user] = _thread_with(alice, ("user", "The export fails with error 413."))
    entry = {"content": "Exports fail with 413", "source": "verified_assistant_finding"}

    unquoted = alice.post("/api/v1/episodic", {**entry, "thread_id": thread["id"]})
    not_found = alice.post(
        "/api/v1/episodic", {**entry, "evidence": "fails with 500", "message_id": user["id"]}
    )

    assert unquoted.status_code == 400
    assert "source 'verified_assistant_finding'" in unquoted.json()["error"]["message"]
    assert not_found.status_code == 422
    message = not_found.json()["error"]["message"]
    assert "source 'verified_assistant_finding' needs an exact quote" in message
    assert "EntrySource" not in message


def test_making_an_entry_live_again_beside_its_live_twin_is_a_conflict(alice):
    from apps.core.errors import Conflict
    from apps.episodic.edits import entry_edit
    from apps.episodic.models import MemoryEntry
    from apps.episodic.services import content_hash, entry_set_status

    kept = alice.post("/api/v1/episodic", {"content": "The VPN drops at 5pm"}).json()
    other = MemoryEntry.objects.get(
        pk=alice.post("/api/v1/episodic", {"content": "The VPN drops at 6pm"}).json()["id"]
    )
    entry_set_status(entry=other, status="rejected", actor="operator:ops")
    with pytest.raises(Conflict, match=f"entry {kept['id']} \\(pending\\)"):
        entry_edit(entry=other, content="The VPN drops at 5pm", actor="operator:ops")
    # A twin left by data written before edits were checked:
    MemoryEntry.objects.filter(pk=other.pk).update(
        content="The VPN drops at 5pm", content_hash=content_hash("The VPN drops at 5pm")
    )
    other.refresh_from_db()

    with pytest.raises(Conflict, match=f"entry {kept['id']} \\(pending\\)"):
        entry_set_status(entry=other, status="approved", actor="operator:ops")

    assert MemoryEntry.objects.get(pk=other.pk).status == "rejected"


def test_an_entry_is_about_its_source_threads_end_user(alice):
    thread = alice.new_thread(resource_id="ann")["id"]
    [message] = alice.append(thread, {"role": "user", "content": "I moved to Hamburg."})

    for source in ({"thread_id": thread}, {"message_id": message["id"]}):
        refused = alice.post(
            "/api/v1/episodic", {"content": "moved", "resource_id": "bob", **source}
        )
        assert refused.status_code == 422, refused.content
        error = refused.json()["error"]
        assert error["message"].startswith("resource_id: the entry's source thread belongs")
        assert error["details"] == {"resource_id": "ann"}

        taken = alice.post(
            "/api/v1/episodic", {"content": f"moved {source}", "resource_id": "ann", **source}
        )
        assert taken.status_code == 201, taken.content
        assert taken.json()["resource_id"] == "ann"
        # Without resource_id, a fact for the agent as a whole (forgetting ann still takes it).
        agent_wide = alice.post("/api/v1/episodic", {"content": f"wide {source}", **source})
        assert agent_wide.status_code == 201 and agent_wide.json()["resource_id"] is None
    assert not Resource.objects.filter(external_id="bob").exists()
