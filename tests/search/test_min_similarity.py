"""min_similarity on POST /search and POST /memory/search: hits that only the vectors found,
less similar than the floor, go; word matches stay."""

import pytest

from apps.memconfig.services import config_update
from tests.search.hits import matched

TEXTS = [
    "the espresso machine is leaking water",
    "the espresso machine needs new water filters",
    "quarterly revenue grew in the northern region",
]


def search(actor, **body):
    """The answer, its results cut to what words and vectors found: the floor judges those (the
    turns of their sessions that fill the answer after them are conversation.py's)."""
    response = actor.post("/api/v1/search", {"scopes": ["messages"], "top_k": 10, **body})
    assert response.status_code == 200, response.content
    answer = response.json()
    answer["results"] = matched(answer["results"])
    return answer


def similarities(results) -> list[float]:
    return [hit["signals"]["vector"]["score"] for hit in results]


@pytest.fixture
def conversation(alice, use_embedder):
    thread = alice.new_thread()
    alice.append(thread["id"], *({"role": "user", "content": text} for text in TEXTS))
    use_embedder(alice)()
    return thread


# One made-up word: no backend's full text matches it, while its letters (the builtin-hash
# embedder hashes trigrams) make the espresso messages similar to it.
UNWORDED = "espressomachine"


def test_the_floor_drops_hits_only_the_vectors_found_less_similar_than_it(alice, conversation):
    everything = search(alice, query=UNWORDED, min_similarity=0.0)["results"]
    assert len(everything) >= 2
    assert all("lexical" not in hit["signals"] for hit in everything)
    scores = sorted(similarities(everything))
    floor = (scores[-1] + scores[-2]) / 2  # between the best hit and the next

    kept = search(alice, query=UNWORDED, min_similarity=floor)

    assert [hit["id"] for hit in kept["results"]] == [everything[0]["id"]]
    assert all(score >= floor for score in similarities(kept["results"]))
    assert "warnings" not in kept


def test_a_word_match_stays_whatever_its_similarity(alice, conversation):
    found = search(alice, query="revenue", min_similarity=0.99)["results"]

    assert [hit["content"] for hit in found] == [TEXTS[2]]
    assert found[0]["signals"]["vector"]["score"] < 0.99


def test_the_default_floor_is_the_search_min_similarity_setting(alice, conversation):
    query = UNWORDED
    open_floor = search(alice, query=query, min_similarity=0.0)["results"]
    config_update(agent=alice.agent, changes={"search_min_similarity": 0.0}, changed_by="t")
    by_setting_zero = search(alice, query=query)["results"]
    config_update(agent=alice.agent, changes={"search_min_similarity": 0.99}, changed_by="t")
    by_setting_high = search(alice, query=query)["results"]

    assert [hit["id"] for hit in by_setting_zero] == [hit["id"] for hit in open_floor]
    assert all(
        "lexical" in hit["signals"] or hit["signals"]["vector"]["score"] >= 0.99
        for hit in by_setting_high
    )
    assert len(by_setting_high) < len(open_floor)


def test_memory_search_takes_the_floor_as_well(alice, use_embedder):
    for text in TEXTS:
        response = alice.post("/api/v1/memory/upsert", {"content": text, "namespace": "facts"})
        assert response.status_code == 201, response.content
    use_embedder(alice)()
    body = {"query": UNWORDED, "namespace": "facts", "top_k": 10}

    everything = alice.post("/api/v1/memory/search", {**body, "min_similarity": 0.0}).json()
    best = max(everything["results"], key=lambda hit: hit["similarity"])
    kept = alice.post(
        "/api/v1/memory/search", {**body, "min_similarity": best["similarity"] - 1e-4}
    ).json()

    assert len(everything["results"]) >= 2
    assert [hit["content"] for hit in kept["results"]] == [best["content"]]


def test_a_full_text_project_ignores_the_floor_and_says_so(alice):
    thread = alice.new_thread()
    alice.append(thread["id"], *({"role": "user", "content": text} for text in TEXTS))

    asked = search(alice, query="espresso", min_similarity=0.99)
    by_default = search(alice, query="espresso")

    assert [hit["id"] for hit in asked["results"]] == [hit["id"] for hit in by_default["results"]]
    assert len(asked["results"]) == 2
    assert [w["code"] for w in asked["warnings"]] == ["min_similarity_ignored"]
    assert "warnings" not in by_default


@pytest.mark.parametrize("value", [-0.1, 1.5, "high", None])
def test_a_bad_floor_is_a_400_naming_it(alice, value):
    response = alice.post("/api/v1/search", {"query": "x", "min_similarity": value})

    assert response.status_code == 400
    assert response.json()["error"]["message"].startswith("min_similarity: ")
