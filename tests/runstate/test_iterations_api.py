def test_it_numbers_attempts_per_task(alice):
    thread = alice.new_thread()
    run = alice.post(f"/api/v1/threads/{thread['id']}/runs", {}).json()
    url = f"/api/v1/threads/{thread['id']}/iterations"

    a1 = alice.post(url, {"task": "build-wf", "outcome": "failed", "error": "401 on HTTP node"})
    a2 = alice.post(url, {"task": "build-wf", "outcome": "succeeded", "run_id": run["id"]})
    other = alice.post(url, {"task": "deploy", "outcome": "failed"})

    assert [a1.json()["attempt"], a2.json()["attempt"], other.json()["attempt"]] == [1, 2, 1]
    assert a2.json()["run_id"] == run["id"]
    listed = alice.get(url, {"task": "build-wf"}).json()["results"]
    assert [(i["attempt"], i["outcome"]) for i in listed] == [(1, "failed"), (2, "succeeded")]


def test_it_refuses_a_run_of_another_thread(alice):
    one, two = alice.new_thread(), alice.new_thread()
    run = alice.post(f"/api/v1/threads/{two['id']}/runs", {}).json()

    response = alice.post(
        f"/api/v1/threads/{one['id']}/iterations",
        {"task": "t", "outcome": "failed", "run_id": run["id"]},
    )

    assert response.status_code == 400
    assert response.json()["error"]["message"].startswith("run_id:")


def test_it_rejects_an_unknown_outcome(alice):
    thread = alice.new_thread()

    response = alice.post(
        f"/api/v1/threads/{thread['id']}/iterations", {"task": "t", "outcome": "meh"}
    )

    assert response.status_code == 400
    assert "outcome" in response.json()["error"]["details"]


def test_an_unknown_outcome_is_named_with_the_allowed_values(alice):
    thread = alice.new_thread()

    response = alice.post(
        f"/api/v1/threads/{thread['id']}/iterations", {"task": "t", "outcome": "meh"}
    )

    assert response.status_code == 400
    assert response.json()["error"]["message"] == (
        'outcome: "meh" is not allowed; one of: succeeded, failed, abandoned.'
    )


def test_a_succeeded_attempt_with_an_error_is_refused_naming_error(alice):
    thread = alice.new_thread()["id"]
    body = {"task": "deploy", "outcome": "succeeded", "error": "timeout"}

    response = alice.post(f"/api/v1/threads/{thread}/iterations", body)

    assert response.status_code == 400
    assert response.json()["error"]["details"] == {
        "error": ["A succeeded attempt has no error: log it as failed, or leave out."]
    }
    assert alice.get(f"/api/v1/threads/{thread}/iterations").json()["results"] == []
