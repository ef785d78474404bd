"""The thread page's top: the latest run's status and error; contexts placed and labelled."""

import re

import pytest

HTMX = {"HTTP_HX_REQUEST": "true"}
ERROR = "carrier API kept answering 503 after 3 retries"


@pytest.fixture
def operator(as_role):
    return as_role("operator")


def _loop(alice, *, fail_last: bool):
    """Two runs of a tool loop logged as examples/agent_loop.py does; the last may fail."""
    thread = alice.new_thread(title="Parcel loop")
    for number in range(2):
        run = alice.post(f"/api/v1/threads/{thread['id']}/runs", {"name": f"turn {number + 1}"})
        run_id = run.json()["id"]
        alice.append(
            thread["id"],
            {"role": "user", "content": "Where is my parcel?", "run_id": run_id},
            {
                "role": "assistant",
                "kind": "tool_call",
                "name": "track",
                "payload": {"id": f"call_{number}", "arguments": "{}"},
                "run_id": run_id,
            },
            {
                "role": "tool",
                "kind": "tool_result",
                "name": "track",
                "content": '{"status": 503, "error": "unavailable"}',
                "payload": {"tool_call_id": f"call_{number}"},
                "run_id": run_id,
            },
        )
        failed = fail_last and number == 1
        finish = {"status": "failed", "error": ERROR} if failed else {"status": "succeeded"}
        assert alice.post(f"/api/v1/runs/{run_id}/finish", finish).status_code == 200
    return thread


def test_a_failed_latest_run_is_a_banner_with_its_error_above_the_timeline(operator, alice):
    thread = _loop(alice, fail_last=True)

    body = operator.get(f"/console/threads/{thread['id']}/").content.decode()

    banner = re.search(r'<section id="run-status" class="([^"]+)".*?</section>', body, re.S)
    assert banner and "run-failed" in banner.group(1)
    assert "turn 2" in banner.group(0) and '<span class="badge failed">failed</span>' in banner[0]
    assert f'aria-label="Error of the latest run">{ERROR}</pre>' in banner.group(0)
    # Both tool results answered a 503: the thread's errors are counted in the banner.
    assert "2 errors in this thread" in banner.group(0)
    assert body.index('id="run-status"') < body.index('id="timeline"')


def test_a_succeeded_latest_run_shows_its_status_without_an_error(operator, alice):
    thread = _loop(alice, fail_last=False)

    body = operator.get(f"/console/threads/{thread['id']}/").content.decode()

    banner = re.search(r'<section id="run-status".*?</section>', body, re.S).group(0)
    assert "run-succeeded" in banner and "turn 2" in banner and "run-error" not in banner


def test_a_thread_without_runs_says_so(operator, alice):
    thread = alice.new_thread()
    alice.append(thread["id"], {"role": "user", "content": "hi"})

    body = operator.get(f"/console/threads/{thread['id']}/").content.decode()

    assert "No runs in this thread" in body


def test_a_context_asked_after_the_last_message_is_labelled_after_it(operator, alice):
    thread = alice.new_thread()
    alice.append(
        thread["id"], {"role": "user", "content": "one"}, {"role": "user", "content": "two"}
    )
    assert alice.post(f"/api/v1/threads/{thread['id']}/context", {}).status_code == 200

    body = operator.get(f"/console/threads/{thread['id']}/").content.decode()

    assert "context given after #2" in body
    assert "context given before this turn" not in body


def test_a_context_before_a_tool_call_is_linked_on_the_step_line(operator, alice):
    thread = alice.new_thread()
    alice.append(thread["id"], {"role": "user", "content": "Track parcel 4400"})
    given = alice.post(f"/api/v1/threads/{thread['id']}/context", {}).json()
    alice.append(
        thread["id"],
        {"role": "assistant", "kind": "tool_call", "name": "track", "payload": {"id": "c1"}},
        {
            "role": "tool",
            "kind": "tool_result",
            "name": "track",
            "content": '{"ok": true}',
            "payload": {"tool_call_id": "c1"},
        },
    )

    body = operator.get(f"/console/threads/{thread['id']}/").content.decode()

    step = re.search(r'<li class="item step.*?</li>', body, re.S).group(0)
    line = re.search(r'<summary class="step-line">.*?</summary>', step, re.S).group(0)
    assert f'href="/console/contexts/{given["context_id"]}/"' in line
    assert "context given before this turn" in line
    folded = step.split("</summary>", 1)[1]
    assert "context-link" not in folded
    assert body.count("context-link") == 1
