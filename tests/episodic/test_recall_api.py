import pytest

from tests.episodic.conftest import configure


def _assert_error_shape(response, status, code):
    assert response.status_code == status, response.content
    error = response.json()["error"]
    assert set(error) == {"code", "message", "details"}
    assert error["code"] == code
    assert error["message"]
    return error


@pytest.mark.parametrize(
    "body, field",
    [
        ({"query": ""}, "query"),
        ({"query": "   "}, "query"),
        ({}, "query"),
        ({"query": "x" * 2001}, "query"),
        ({"query": "x", "top_k": 0}, "top_k"),
        ({"query": "x", "top_k": 51}, "top_k"),
        ({"query": "x", "top_k": -3}, "top_k"),
        ({"query": "x", "top_k": "many"}, "top_k"),
        ({"query": "x", "scopes": ["episodic"]}, "scopes"),
    ],
)
def test_recall_rejects_bad_input_with_the_error_shape(alice, body, field):
    response = alice.post("/api/v1/episodic/recall", body)

    error = _assert_error_shape(response, 400, "invalid")
    assert field in error["details"]
    assert error["message"].startswith(f"{field}:")


def test_recall_for_an_unknown_resource_is_a_404(alice):
    response = alice.post("/api/v1/episodic/recall", {"query": "x", "resource_id": "nobody"})

    error = _assert_error_shape(response, 404, "not_found")
    assert "nobody" in error["message"]


@pytest.mark.parametrize("top_k", [1, 50])
def test_recall_accepts_top_k_at_both_ends_of_its_range(alice, top_k):
    response = alice.post("/api/v1/episodic/recall", {"query": "anything", "top_k": top_k})

    assert response.status_code == 200, response.content
    assert response.json() == {"results": []}


def test_recall_keeps_entries_under_the_similarity_floor_out(alice, use_embedder):
    # With vectors every entry has some similarity to any query: recall_memory lists those the
    # floor lets through, as POST /search and the context do (it listed them all).
    configure(alice, episodic_approval_required=False)
    run_jobs = use_embedder(alice)
    for content in ("Ann's invoices go out on Mondays.", "The staging server runs Debian."):
        assert alice.post("/api/v1/episodic", {"content": content}).status_code == 201
    run_jobs()

    unrelated = alice.post("/api/v1/episodic/recall", {"query": "zebra quantum"}).json()
    related = alice.post("/api/v1/episodic/recall", {"query": "invoices"}).json()

    assert unrelated["results"] == []
    assert [hit["content"] for hit in related["results"]] == ["Ann's invoices go out on Mondays."]
