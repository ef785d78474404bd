def test_a_thread_without_a_plan_reads_as_version_0(alice):
    thread = alice.new_thread()

    body = alice.get(f"/api/v1/threads/{thread['id']}/plan").json()

    assert body["version"] == 0
    assert body["steps"] == []


def test_it_replaces_the_plan_when_the_version_is_current(alice):
    thread = alice.new_thread()
    url = f"/api/v1/threads/{thread['id']}/plan"

    v1 = alice.put(url, {"version": 0, "goal": "ship", "steps": [{"title": "build"}]})
    v2 = alice.put(
        url,
        {
            "version": 1,
            "goal": "ship",
            "phase": "testing",
            "iteration": 2,
            "steps": [{"id": "s1", "title": "build", "status": "done"}],
        },
    )

    assert v1.status_code == 200 and v1.json()["version"] == 1
    assert v1.json()["steps"] == [{"title": "build", "status": "pending"}]
    assert v2.json()["version"] == 2
    assert alice.get(url).json()["phase"] == "testing"


def test_a_stale_version_is_a_409_with_the_current_version(alice):
    thread = alice.new_thread()
    url = f"/api/v1/threads/{thread['id']}/plan"
    alice.put(url, {"version": 0, "goal": "a"})
    alice.put(url, {"version": 1, "goal": "b"})

    stale = alice.put(url, {"version": 1, "goal": "c"})
    duplicate_create = alice.put(url, {"version": 0, "goal": "d"})

    assert stale.status_code == 409
    assert stale.json()["error"]["details"]["current_version"] == 2
    assert duplicate_create.status_code == 409
    assert alice.get(url).json()["goal"] == "b"


def test_it_rejects_a_plan_without_a_version_or_with_bad_steps(alice):
    thread = alice.new_thread()
    url = f"/api/v1/threads/{thread['id']}/plan"

    no_version = alice.put(url, {"goal": "x"})
    bad_step = alice.put(url, {"version": 0, "steps": [{"title": "t", "status": "maybe"}]})

    assert no_version.status_code == 400
    assert bad_step.json()["error"]["message"].startswith("steps[0].status:")


def test_a_bad_step_status_is_named_with_the_allowed_values(alice):
    thread = alice.new_thread()
    url = f"/api/v1/threads/{thread['id']}/plan"
    steps = [{"title": "plan"}, {"title": "build", "status": "maybe"}]

    response = alice.put(url, {"version": 0, "steps": steps})

    assert response.status_code == 400
    assert response.json()["error"]["message"] == (
        'steps[1].status: "maybe" is not allowed; one of: pending, in_progress, done, failed, '
        "skipped."
    )
    assert alice.get(url).json()["version"] == 0


def test_two_steps_with_one_id_are_refused_through_the_api_and_the_tool(alice):
    thread = alice.new_thread()["id"]
    steps = [
        {"id": "s1", "title": "Ask"},
        {"id": "s2", "title": "Pay"},
        {"id": "s1", "title": "Go"},
    ]
    says = "steps[2].id: 's1' is the id of steps[0] too; give each step its own id, or none."

    response = alice.put(f"/api/v1/threads/{thread}/plan", {"version": 0, "steps": steps})
    arguments = {"thread_id": thread, "version": 0, "steps": steps}
    tool = alice.post("/api/v1/tools/call", {"name": "plan_update", "arguments": arguments})

    assert (response.status_code, response.json()["error"]["message"]) == (400, says)
    assert (tool.status_code, tool.json()["error"]["message"]) == (400, says)
    assert alice.get(f"/api/v1/threads/{thread}/plan").json()["version"] == 0
