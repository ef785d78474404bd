"""GET /threads/{id}/observations and /threads/{id}/summary: what the background work kept."""

from datetime import datetime

import pytest

from apps.jobs.services import job_run_pending
from tests.observations.conftest import configure, words

HUNDRED = words(96)


def _observed(actor, *, reflect: bool = False) -> str:
    configure(
        actor,
        observer_message_tokens=300,
        reflector_observation_tokens=100 if reflect else 10_000_000,
        recent_window=2,
    )
    thread = actor.new_thread()["id"]
    for i in range(4):
        actor.append(
            thread, *[{"role": "user", "content": f"Ticket T-{i}{j} {HUNDRED}"} for j in range(3)]
        )
        job_run_pending()
    return thread


def _compacted(actor) -> str:
    configure(actor, context_strategy="compaction", compaction_budget_tokens=1000, recent_window=2)
    thread = actor.new_thread()["id"]
    actor.append(
        thread, *[{"role": "user", "content": f"Ticket T-{i} {HUNDRED}"} for i in range(12)]
    )
    job_run_pending()
    return thread


def test_it_lists_active_and_superseded_observations_oldest_first(alice):
    thread = _observed(alice, reflect=True)

    body = alice.get(f"/api/v1/threads/{thread}/observations").json()

    rows = body["results"]
    assert set(rows[0]) == {
        "id",
        "thread_id",
        "generation",
        "first_seq",
        "last_seq",
        "tokens",
        "content",
        "is_reflection",
        "superseded_by",
        "method",
        "model",
        "prompt_version",
        "created_at",
    }
    assert rows[0]["first_seq"] == 1 and rows[0]["superseded_by"] is not None
    # Oldest first, as a total order: creation time, then the id for rows of one microsecond.
    order = [(datetime.fromisoformat(row["created_at"]), row["id"]) for row in rows]
    assert order == sorted(order)
    reflection = next(row for row in rows if row["is_reflection"])
    assert rows[0]["superseded_by"] in {row["id"] for row in rows if row["is_reflection"]}
    assert reflection["generation"] == 2 and reflection["method"] == "extractive"


def test_it_filters_by_status(alice):
    thread = _observed(alice, reflect=True)

    active = alice.get(f"/api/v1/threads/{thread}/observations", {"status": "active"}).json()
    superseded = alice.get(f"/api/v1/threads/{thread}/observations", {"status": "superseded"})

    assert active["results"] and all(row["superseded_by"] is None for row in active["results"])
    rows = superseded.json()["results"]
    assert rows and all(row["superseded_by"] for row in rows)
    ranges = sorted((row["first_seq"], row["last_seq"]) for row in active["results"])
    assert ranges[0][0] == 1
    assert all(after[0] == before[1] + 1 for before, after in zip(ranges, ranges[1:], strict=False))


def test_it_pages_with_a_cursor(alice):
    thread = _observed(alice)
    everything = alice.get(f"/api/v1/threads/{thread}/observations").json()["results"]

    first = alice.get(f"/api/v1/threads/{thread}/observations", {"limit": 1}).json()
    second = alice.client.get(first["next"]).json()

    assert len(everything) >= 2
    assert [first["results"][0]["id"], second["results"][0]["id"]] == [
        row["id"] for row in everything[:2]
    ]


def test_it_refuses_an_unknown_status(alice):
    thread = alice.new_thread()["id"]

    response = alice.get(f"/api/v1/threads/{thread}/observations", {"status": "old"})

    assert response.status_code == 400
    assert response.json()["error"]["message"] == "status: Must be active or superseded."


def test_a_thread_without_observations_lists_none(alice):
    thread = alice.new_thread()["id"]

    body = alice.get(f"/api/v1/threads/{thread}/observations").json()

    assert body["results"] == []


def test_the_summary_is_the_latest_version(alice):
    thread = _compacted(alice)

    body = alice.get(f"/api/v1/threads/{thread}/summary").json()

    assert body["thread_id"] == thread
    assert body["version"] >= 1 and body["covers_up_to_seq"] == 10
    assert "T-9" in body["content"] and body["tokens"] > 0
    assert (body["method"], body["model"], body["prompt_version"]) == (
        "extractive",
        "",
        "extractive-1",
    )


def test_a_thread_without_a_summary_answers_version_zero(alice):
    thread = alice.new_thread()["id"]

    body = alice.get(f"/api/v1/threads/{thread}/summary").json()

    assert body == {
        "thread_id": thread,
        "version": 0,
        "content": "",
        "tokens": 0,
        "covers_up_to_seq": 0,
        "method": "",
        "model": "",
        "prompt_version": "",
        "created_at": None,
    }


@pytest.mark.parametrize("outsider", ["bob", "carol"])
@pytest.mark.parametrize("path", ["observations", "summary"])
def test_another_agents_thread_answers_404(alice, request, outsider, path):
    thread = _observed(alice) if path == "observations" else _compacted(alice)

    response = request.getfixturevalue(outsider).get(f"/api/v1/threads/{thread}/{path}")

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
