"""A curator searches inside one knowledge base: the API's search, its hits and signals."""

import pytest

from apps.jobs.services import job_run_pending
from apps.knowledge.services import document_from_text, knowledge_base_create

HTMX = {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "kb-search-results"}


@pytest.fixture
def curator(as_role):
    return as_role("curator")


@pytest.fixture
def bases(alice):
    """Two bases of acme, both holding a text about restarts; only ops mentions the pump."""
    project = alice.agent.project
    ops = knowledge_base_create(project=project, slug="ops", name="Operations")
    other = knowledge_base_create(project=project, slug="legal", name="Legal")
    document_from_text(
        kb=ops, title="Pump runbook", text="Restart the coolant pump with the red lever.", actor="t"
    )
    document_from_text(
        kb=other, title="Contract", text="Restart clauses: the contract restarts yearly.", actor="t"
    )
    job_run_pending()
    return ops, other


def _search(curator, kb, alice, **params):
    query = {"q": "restart pump", "agent": str(alice.agent.id), **params}
    return curator.get(f"/console/knowledge/{kb.id}/search/", query, **HTMX)


def test_it_returns_the_hits_the_api_gives_the_agent_for_that_base(curator, alice, bases):
    ops, _ = bases
    api = alice.post(
        "/api/v1/search",
        {"query": "restart pump", "scopes": ["knowledge"], "knowledge_base": "ops"},
    ).json()["results"]

    response = _search(curator, ops, alice)

    assert response.status_code == 200
    hits = response.context["results"]
    assert [str(hit.id) for hit in hits] == [result["id"] for result in api]
    assert [hit.score for hit in hits] == [result["score"] for result in api]
    body = response.content.decode()
    assert body.startswith('<section id="kb-search-results"')
    assert "Pump runbook" in body and "Contract" not in body
    assert "score " in body and "lexical rank 1" in body


def test_it_searches_only_the_base_it_is_on(curator, alice, bases):
    _, legal = bases

    hits = _search(curator, legal, alice, q="restart").context["results"]

    assert [hit.content for hit in hits] == ["Restart clauses: the contract restarts yearly."]


def test_the_base_page_has_the_search_form_with_the_project_s_agents(curator, alice, bob, bases):
    body = curator.get(f"/console/knowledge/{bases[0].id}/").content.decode()

    assert 'id="kb-search"' in body
    assert f'<option value="{alice.agent.id}" selected>acme/alice</option>' in body
    assert f'<option value="{bob.agent.id}">acme/bob</option>' in body


def test_without_htmx_the_search_answers_the_whole_page(curator, alice, bases):
    response = curator.get(
        f"/console/knowledge/{bases[0].id}/search/", {"q": "pump", "agent": str(alice.agent.id)}
    )

    body = response.content.decode()
    assert response.status_code == 200 and "<main>" in body and "Pump runbook" in body


@pytest.mark.parametrize(
    "params, message",
    [
        ({"q": ""}, "q: type the words or question to search for."),
        ({"agent": "not-an-id"}, "agent: “not-an-id” is not a valid UUID."),
        ({"top_k": "0"}, "top_k: Ensure this value is greater than or equal to 1."),
    ],
)
def test_a_bad_parameter_is_a_400_naming_it(curator, alice, bases, params, message):
    response = _search(curator, bases[0], alice, **params)

    assert response.status_code == 400
    assert message in response.content.decode()


def test_an_agent_of_another_project_is_refused(curator, alice, carol, bases):
    response = _search(curator, bases[0], alice, agent=str(carol.agent.id))

    assert response.status_code == 400
    assert "agent: no such agent in this project" in response.content.decode()


def test_other_roles_cannot_search_a_base(as_role, alice, bases):
    response = _search(as_role("operator"), bases[0], alice)

    assert response.status_code == 403


def test_a_status_poll_does_not_wipe_a_flash_but_an_action_replaces_it(curator, bases):
    ops, _ = bases
    upload = curator.post(
        f"/console/knowledge/{ops.id}/text/", {"title": "Valves", "text": "Valve manual."}, **HTMX
    )
    assert "ingesting it." in upload.content.decode()

    poll = curator.get(f"/console/knowledge/{ops.id}/", HTTP_HX_REQUEST="true",
                       HTTP_HX_TARGET="document-list")  # fmt: skip

    assert poll.status_code == 200
    assert 'id="messages"' not in poll.content.decode()
    empty_post = curator.post(f"/console/knowledge/{ops.id}/upload/", {}, **HTMX)
    assert 'id="messages" class="messages" hx-swap-oob="true"' in empty_post.content.decode()
