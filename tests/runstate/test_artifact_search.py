"""Text artifacts are a search scope of their own: `"scopes": ["artifacts"]` on POST /search."""

import pytest

from tests.runstate.test_artifacts_api import upload


@pytest.fixture
def run(alice):
    thread = alice.new_thread(resource_id="ann")
    return alice.post(f"/api/v1/threads/{thread['id']}/runs", {"name": "build"}).json()


def search(actor, query, **body):
    response = actor.post("/api/v1/search", {"query": query, "scopes": ["artifacts"], **body})
    assert response.status_code == 200, response.content
    return response.json()["results"]


def artifact(actor, run_id, name, content):
    response = actor.post(f"/api/v1/runs/{run_id}/artifacts", {"name": name, "content": content})
    assert response.status_code == 201, response.content
    return response.json()


def test_a_text_artifact_is_found_by_its_words_with_its_name_and_run(alice, run):
    spec = artifact(alice, run["id"], "spec.md", "# Billing export\nCSV with one row per invoice.")
    artifact(alice, run["id"], "other.txt", "Nothing to do with it.")

    [hit] = search(alice, "invoice export")

    assert hit["type"] == "artifact" and hit["id"] == spec["id"]
    assert hit["content"] == "# Billing export\nCSV with one row per invoice."
    assert hit["thread_id"] == run["thread_id"]
    assert hit["metadata"]["name"] == "spec.md" and hit["metadata"]["run_id"] == run["id"]


def test_binary_artifacts_are_not_searched(alice, run):
    upload(alice, run["id"], name="invoice.png")  # image bytes, named with the query's word

    assert search(alice, "invoice") == []


def test_thread_narrows_and_other_agents_see_nothing(alice, bob, run):
    artifact(alice, run["id"], "spec.md", "Invoice export in CSV.")
    other = alice.new_thread()
    other_run = alice.post(f"/api/v1/threads/{other['id']}/runs", {}).json()
    artifact(alice, other_run["id"], "spec.md", "Invoice export in JSON.")
    bob_thread = bob.new_thread()
    bob_run = bob.post(f"/api/v1/threads/{bob_thread['id']}/runs", {}).json()
    artifact(bob, bob_run["id"], "spec.md", "Invoice export for bob.")

    assert len(search(alice, "invoice export")) == 2
    narrowed = search(alice, "invoice export", thread_id=run["thread_id"])
    assert [hit["content"] for hit in narrowed] == ["Invoice export in CSV."]
    assert [hit["content"] for hit in search(bob, "invoice export")] == ["Invoice export for bob."]


def test_a_deleted_artifact_or_thread_is_no_longer_found(alice, run):
    first = artifact(alice, run["id"], "a.md", "Invoice export one.")
    artifact(alice, run["id"], "b.md", "Invoice export two.")

    assert alice.delete(f"/api/v1/artifacts/{first['id']}").status_code == 204
    assert [hit["content"] for hit in search(alice, "invoice")] == ["Invoice export two."]
    alice.delete(f"/api/v1/threads/{run['thread_id']}")
    assert search(alice, "invoice") == []
