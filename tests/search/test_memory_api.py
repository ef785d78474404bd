import pytest

from apps.audit.models import AuditEvent


def test_upsert_creates_the_namespace_and_stores_content_once(alice):
    first = alice.post(
        "/api/v1/memory/upsert",
        {
            "content": "Coolify requires the pgvector image for vector support.",
            "namespace": "janagi",
            "metadata": {"source": "chat_extraction"},
        },
    )
    again = alice.post(
        "/api/v1/memory/upsert",
        {
            "content": "Coolify requires the pgvector image for vector support.",
            "namespace": "janagi",
        },
    )

    assert first.status_code == 201
    assert again.status_code == 200
    assert again.json()["id"] == first.json()["id"]
    assert again.json()["created"] is False


def test_an_upsert_answers_the_namespace_as_stored_whatever_case_it_was_sent_in(alice):
    fact = "Backups run at 02:00."
    first = alice.post("/api/v1/memory/upsert", {"content": fact, "namespace": "Ops-Team"})
    again = alice.post("/api/v1/memory/upsert", {"content": fact, "namespace": "OPS-TEAM"})
    found = alice.post("/api/v1/memory/search", {"query": "backups", "namespace": "ops-team"})

    assert (first.json()["namespace"], again.json()["namespace"]) == ("ops-team", "ops-team")
    assert again.json()["id"] == first.json()["id"]
    assert [hit["content"] for hit in found.json()["results"]] == [fact]


def test_an_upsert_audits_the_namespace_it_creates_and_the_fact_it_stores(alice):
    for content in ("Coolify requires the pgvector image.", "Coolify requires the pgvector image."):
        alice.post("/api/v1/memory/upsert", {"content": content, "namespace": "janagi"})
    alice.post("/api/v1/memory/upsert", {"content": "Backups run at 02:00.", "namespace": "janagi"})

    events = AuditEvent.objects.filter(
        project=alice.agent.project, object_type__in=["knowledge_base", "document"]
    ).order_by("at", "id")
    assert [(e.action, e.summary) for e in events] == [
        ("knowledge_base.create", "janagi"),
        ("document.create", "Coolify requires the pgvector image."),
        ("document.create", "Backups run at 02:00."),
    ]
    assert events[1].after["source"] == "memory upsert"
    assert {e.actor for e in events} == {"agent:acme/alice"}


def test_search_ranks_facts_of_the_namespace_with_scores(alice, use_embedder):
    for fact in (
        "Coolify requires the pgvector image for vector support.",
        "Deploy on Coolify by pushing to the main branch.",
        "The office coffee machine is on floor two.",
    ):
        alice.post("/api/v1/memory/upsert", {"content": fact, "namespace": "janagi"})
    alice.post(
        "/api/v1/memory/upsert", {"content": "Deploy on Coolify elsewhere", "namespace": "other"}
    )
    use_embedder(alice)()

    response = alice.post(
        "/api/v1/memory/search",
        # The test embedder's similarities sit below the default floor (search_min_similarity).
        {
            "query": "How do I deploy on Coolify?",
            "namespace": "janagi",
            "top_k": 2,
            "min_similarity": 0,
        },
    )

    assert response.status_code == 200
    results = response.json()["results"]
    assert len(results) == 2
    assert results[0]["content"] == "Deploy on Coolify by pushing to the main branch."
    assert results[0]["score"] >= results[1]["score"]
    assert results[0]["similarity"] is not None
    assert all("elsewhere" not in r["content"] for r in results)


def _assert_error_shape(response, status, code):
    assert response.status_code == status, response.content
    error = response.json()["error"]
    assert set(error) == {"code", "message", "details"}
    assert error["code"] == code
    assert error["message"]
    return error


def test_search_of_an_unknown_namespace_is_a_404_naming_it(alice, carol):
    carol.post("/api/v1/memory/upsert", {"content": "carol's fact", "namespace": "facts"})

    response = alice.post("/api/v1/memory/search", {"query": "fact", "namespace": "facts"})

    error = _assert_error_shape(response, 404, "not_found")
    assert "namespace 'facts'" in error["message"]


@pytest.mark.parametrize(
    "body, field",
    [
        ({"query": "", "namespace": "n"}, "query"),
        ({"query": "  ", "namespace": "n"}, "query"),
        ({"namespace": "n"}, "query"),
        ({"query": "x"}, "namespace"),
        ({"query": "x", "namespace": "not a slug"}, "namespace"),
        ({"query": "x", "namespace": "n", "top_k": 0}, "top_k"),
        ({"query": "x", "namespace": "n", "top_k": 51}, "top_k"),
        ({"query": "x", "namespace": "n", "top_k": "five"}, "top_k"),
        ({"query": "x", "namespace": "n", "filter": {}}, "filter"),
    ],
)
def test_search_rejects_bad_input_with_the_error_shape(alice, body, field):
    alice.post("/api/v1/memory/upsert", {"content": "a fact", "namespace": "n"})

    response = alice.post("/api/v1/memory/search", body)

    error = _assert_error_shape(response, 400, "invalid")
    assert field in error["details"]
    assert error["message"].startswith(f"{field}:")


def test_upsert_of_a_bad_namespace_is_a_400(alice):
    response = alice.post("/api/v1/memory/upsert", {"content": "x", "namespace": "not a slug"})

    error = _assert_error_shape(response, 400, "invalid")
    assert "namespace" in error["details"]


def test_upserting_the_text_of_a_document_not_read_yet_is_409_naming_it(alice):
    alice.post("/api/v1/knowledge-bases", {"slug": "facts"})
    uploaded = alice.post(
        "/api/v1/knowledge-bases/facts/documents", {"title": "t", "text": "Parking is at C"}
    ).json()  # no worker ran: pending, no chunk yet

    response = alice.post(
        "/api/v1/memory/upsert", {"content": "Parking is at C", "namespace": "facts"}
    )

    assert response.status_code == 409, response.content
    message = response.json()["error"]["message"]
    assert message.startswith("content:") and uploaded["id"] in message
