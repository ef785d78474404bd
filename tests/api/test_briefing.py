"""GET /threads/{id}/briefing: a task's earlier attempts, plan step and observations, bounded."""

from apps.observations.models import Observation
from apps.providers.tokens import count_tokens


def log_attempts(actor, thread_id, task, errors):
    for number, error in enumerate(errors, start=1):
        response = actor.post(
            f"/api/v1/threads/{thread_id}/iterations",
            {"task": task, "outcome": "failed", "summary": f"try {number}", "error": error},
        )
        assert response.status_code == 201, response.content


def briefing(actor, thread_id, **params):
    response = actor.get(f"/api/v1/threads/{thread_id}/briefing", params)
    assert response.status_code == 200, response.content
    return response.json()


def test_three_failed_attempts_are_listed_in_order_with_their_errors(alice):
    thread = alice.new_thread()
    errors = ["ImportError: no module yaml", "TimeoutError after 30 s", "AssertionError: 3 != 4"]
    log_attempts(alice, thread["id"], "build report", errors)
    log_attempts(alice, thread["id"], "other task", ["unrelated failure"])

    body = briefing(alice, thread["id"], task="build report", max_tokens=200)

    text = body["text"]
    positions = [text.index(error) for error in errors]
    assert positions == sorted(positions)
    assert "1. failed: try 1" in text and "3. failed: try 3" in text
    assert "unrelated failure" not in text
    assert body["tokens"] == count_tokens(text) <= 200
    assert len(body["attempts"]) == 3 and body["attempts_left_out"] == 0


def test_a_small_budget_keeps_the_newest_attempts_and_says_what_was_left_out(alice):
    thread = alice.new_thread()
    errors = [f"error number {n}: " + "word " * 30 for n in range(1, 4)]
    log_attempts(alice, thread["id"], "deploy", errors)

    body = briefing(alice, thread["id"], task="deploy", max_tokens=90)

    assert body["tokens"] <= 90
    assert body["attempts_left_out"] >= 1
    assert "earlier attempts left out for length" in body["text"]
    assert "error number 3" in body["text"] and "error number 1" not in body["text"]


def test_it_adds_the_current_plan_step_and_observations_about_the_task(alice):
    thread = alice.new_thread()
    log_attempts(alice, thread["id"], "deploy service", ["port 80 in use"])
    plan = {
        "version": 0,
        "goal": "ship",
        "steps": [
            {"title": "write code", "status": "done"},
            {"title": "deploy service", "status": "in_progress"},
        ],
    }
    assert alice.put(f"/api/v1/threads/{thread['id']}/plan", plan).status_code == 200
    for n, content in enumerate(["The deploy host is web-3.", "The user likes green."]):
        Observation.objects.create(
            thread_id=thread["id"], content=content, tokens=8, first_seq=n, last_seq=n, generation=1
        )

    body = briefing(alice, thread["id"], task="deploy service", max_tokens=500)
    again = briefing(alice, thread["id"], task="deploy service", max_tokens=500)

    assert "## Current plan step\ndeploy service (in_progress)" in body["text"]
    assert "The deploy host is web-3." in body["text"]
    assert "green" not in body["text"]
    assert body == again  # deterministic


def test_a_task_never_tried_gives_an_empty_briefing(alice):
    thread = alice.new_thread()

    assert briefing(alice, thread["id"], task="new")["text"] == ""


def test_without_a_task_it_briefs_the_latest_attempts_task(alice):
    thread = alice.new_thread()
    log_attempts(alice, thread["id"], "first task", ["old error"])
    log_attempts(alice, thread["id"], "second task", ["new error"])

    body = briefing(alice, thread["id"])

    assert body["task"] == "second task" and "new error" in body["text"]
    assert "old error" not in body["text"]


def test_bad_parameters_are_400_and_other_agents_threads_404(alice, bob):
    thread = alice.new_thread()

    long_task = alice.get(f"/api/v1/threads/{thread['id']}/briefing", {"task": "t" * 201})
    small = alice.get(f"/api/v1/threads/{thread['id']}/briefing", {"task": "t", "max_tokens": 1})
    other = bob.get(f"/api/v1/threads/{thread['id']}/briefing", {"task": "t"})

    assert long_task.status_code == 400
    assert long_task.json()["error"]["message"].startswith("task:")
    assert small.status_code == 400 and small.json()["error"]["message"].startswith("max_tokens:")
    assert other.status_code == 404
