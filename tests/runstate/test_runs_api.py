import pytest


def test_it_starts_and_finishes_a_run(alice):
    thread = alice.new_thread()
    run = alice.post(
        f"/api/v1/threads/{thread['id']}/runs", {"name": "turn 1", "metadata": {"a": 1}}
    )

    finished = alice.post(
        f"/api/v1/runs/{run.json()['id']}/finish",
        {"status": "succeeded", "summary": "answered", "metadata": {"b": 2}},
    )

    assert run.status_code == 201
    assert run.json()["status"] == "running"
    assert finished.status_code == 200
    body = alice.get(f"/api/v1/runs/{run.json()['id']}").json()
    assert body["status"] == "succeeded"
    assert body["summary"] == "answered"
    assert body["metadata"] == {"a": 1, "b": 2}
    assert body["finished_at"] is not None


def test_it_finishes_a_run_once(alice):
    thread = alice.new_thread()
    run = alice.post(f"/api/v1/threads/{thread['id']}/runs", {}).json()
    alice.post(f"/api/v1/runs/{run['id']}/finish", {"status": "failed", "error": "timeout"})

    again = alice.post(f"/api/v1/runs/{run['id']}/finish", {"status": "succeeded"})

    assert again.status_code == 409
    assert alice.get(f"/api/v1/runs/{run['id']}").json()["status"] == "failed"


@pytest.mark.parametrize(
    "body", [{}, {"status": "running"}, {"status": "done"}, {"status": "failed", "x": 1}]
)
def test_it_rejects_bad_finish_input(alice, body):
    thread = alice.new_thread()
    run = alice.post(f"/api/v1/threads/{thread['id']}/runs", {}).json()

    response = alice.post(f"/api/v1/runs/{run['id']}/finish", body)

    assert response.status_code == 400
    assert alice.get(f"/api/v1/runs/{run['id']}").json()["status"] == "running"


def test_a_succeeded_run_with_an_error_is_refused_naming_the_error(alice):
    thread = alice.new_thread()["id"]
    run = alice.post(f"/api/v1/threads/{thread}/runs", {}).json()

    refused = alice.post(f"/api/v1/runs/{run['id']}/finish", {"status": "succeeded", "error": "x"})
    failed = alice.post(f"/api/v1/runs/{run['id']}/finish", {"status": "failed", "error": "x"})

    assert refused.status_code == 400, refused.content
    assert refused.json()["error"]["message"].startswith("error: A succeeded run has no error")
    assert failed.status_code == 200 and failed.json()["error"] == "x"
