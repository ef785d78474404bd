import pytest

from apps.jobs.services import job_run_pending
from apps.memconfig.services import config_update
from apps.threads.models import Message
from tests.conftest import recorded_sql
from tests.search.hits import matched


def _search(actor, **body):
    response = actor.post("/api/v1/search", body)
    assert response.status_code == 200, response.content
    return response.json()["results"]


def _conversation(actor, texts, **thread_fields):
    thread = actor.new_thread(**thread_fields)
    actor.append(thread["id"], *[{"role": "user", "content": text} for text in texts])
    return thread


def test_it_finds_messages_by_words_and_their_stems(alice):
    thread = _conversation(alice, ["We deployed the billing service on Friday", "Lunch was fine"])

    results = _search(alice, query="deploying billing")

    assert [r["content"] for r in matched(results)] == ["We deployed the billing service on Friday"]
    hit = results[0]
    assert hit["type"] == "message"
    assert hit["thread_id"] == thread["id"]
    assert hit["seq"] == 1
    assert hit["signals"]["lexical"]["rank"] == 1
    assert "age_days" in hit["signals"]["recency"]
    assert "vector" not in hit["signals"]  # no embedder configured


def test_it_limits_search_to_a_thread_or_a_resource(alice):
    one = _conversation(alice, ["the invoice is overdue"], resource_id="ann")
    two = _conversation(alice, ["another invoice arrived"], resource_id="bob")

    in_thread = _search(alice, query="invoice", thread_id=one["id"])
    for_bob = _search(alice, query="invoice", resource_id="bob")

    assert [r["thread_id"] for r in in_thread] == [one["id"]]
    assert [r["thread_id"] for r in for_bob] == [two["id"]]


def test_message_hits_carry_their_range_without_repeating_messages(alice):
    texts = ["intro", "alpha topic", "filler one", "filler two", "alpha again", "closing"]
    _conversation(alice, texts)

    # top_k 2: the two matches alone, not the turns of their session they lift (conversation.py)
    results = _search(alice, query="alpha", top_k=2, message_range={"before": 2, "after": 1})

    by_seq = {r["seq"]: r for r in results}
    assert set(by_seq) == {2, 5}
    ranges = {
        seq: ([m["seq"] for m in r["context"]["before"]], [m["seq"] for m in r["context"]["after"]])
        for seq, r in by_seq.items()
    }
    first, second = sorted(by_seq, key=lambda seq: results.index(by_seq[seq]))
    shown = [seq for before, after in ranges.values() for seq in before + after] + [2, 5]
    assert len(shown) == len(set(shown)), f"a message appears twice: {ranges}"
    assert sorted(shown) == [1, 2, 3, 4, 5, 6]
    assert ranges[2][0] == [1]


def test_the_default_range_comes_from_config(alice):
    _conversation(alice, ["one", "two", "three", "needle", "five", "six"])

    [hit] = _search(alice, query="needle", top_k=1)

    assert [m["seq"] for m in hit["context"]["before"]] == [2, 3]
    assert [m["seq"] for m in hit["context"]["after"]] == [5]


def test_hits_of_several_threads_and_their_ranges_are_read_in_one_statement(alice):
    one = _conversation(alice, ["a", "b", "the kiln cracked", "c", "d"])
    two = _conversation(alice, ["x", "kiln repaired", "y"])

    def search(before, after):
        with recorded_sql() as queries:
            results = _search(
                alice, query="kiln", top_k=2, message_range={"before": before, "after": after}
            )
        stretches = {
            (r["thread_id"], r["seq"]): (
                [m["content"] for m in r["context"]["before"]],
                [m["content"] for m in r["context"]["after"]],
            )
            for r in results
        }
        return stretches, sum("threads_message" in sql for sql in queries)

    bare, bare_reads = search(0, 0)
    wide, wide_reads = search(5, 5)

    assert bare == {(one["id"], 3): ([], []), (two["id"], 2): ([], [])}
    assert wide == {(one["id"], 3): (["a", "b"], ["c", "d"]), (two["id"], 2): (["x"], ["y"])}
    assert wide_reads == bare_reads  # the ranges come in the hits' own statement


SECRET = "the vault code is orange-42"


def _store_secret_everywhere(actor) -> dict:
    """Store SECRET as an approved entry, a message and a fact; return the ids by result type."""
    config_update(
        agent=actor.agent, changes={"episodic_approval_required": False}, changed_by="test"
    )
    thread = actor.new_thread(resource_id="shared-user")
    [message] = actor.append(thread["id"], {"role": "user", "content": SECRET})
    entry = actor.post("/api/v1/episodic", {"content": SECRET, "resource_id": "shared-user"})
    fact = actor.post("/api/v1/memory/upsert", {"content": SECRET, "namespace": "facts"})
    assert entry.json()["status"] == "approved"
    return {
        "message": message["id"],
        "episodic": entry.json()["id"],
        "knowledge": fact.json()["id"],
    }


def _ids(response) -> list[str]:
    assert response.status_code == 200, response.content
    return [r["id"] for r in response.json()["results"]]


def test_an_exact_copy_in_another_agents_or_projects_memory_never_appears(
    alice, bob, carol, use_embedder
):
    ids = {actor.agent.slug: _store_secret_everywhere(actor) for actor in (alice, bob, carol)}
    use_embedder(carol)
    use_embedder(alice)()  # every copy now has a vector; each other copy is at cosine 1.0
    mine, bobs, carols = ids["alice"], ids["bob"], ids["carol"]
    assert bobs["knowledge"] == mine["knowledge"]  # knowledge is the project's, shared
    assert len({mine["message"], bobs["message"], carols["message"]}) == 3

    for resource in ({}, {"resource_id": "shared-user"}):
        for scope in ("messages", "episodic", "knowledge"):
            narrowed = {} if scope == "knowledge" else resource  # no end user's knowledge
            [hit] = _search(alice, query=SECRET, scopes=[scope], top_k=50, **narrowed)
            assert hit["id"] == mine[RESULT_TYPE[scope]], (scope, resource)
            assert hit["signals"]["vector"]["score"] == pytest.approx(1.0, abs=1e-4)
        every = _search(alice, query=SECRET, scopes=list(RESULT_TYPE), top_k=50, **resource)
        assert sorted(r["id"] for r in every) == sorted(mine.values())
        recalled = alice.post("/api/v1/episodic/recall", {"query": SECRET, "top_k": 50, **resource})
        assert _ids(recalled) == [mine["episodic"]]
    facts = alice.post(
        "/api/v1/memory/search", {"query": SECRET, "namespace": "facts", "top_k": 50}
    )
    assert _ids(facts) == [mine["knowledge"]]
    assert facts.json()["results"][0]["similarity"] == pytest.approx(1.0, abs=1e-4)
    theirs = _search(carol, query=SECRET, scopes=list(RESULT_TYPE), top_k=50)
    assert sorted(r["id"] for r in theirs) == sorted(carols.values())


RESULT_TYPE = {"messages": "message", "episodic": "episodic", "knowledge": "knowledge"}


def test_vectors_join_the_ranking_once_the_embedder_job_ran(alice, use_embedder):
    _conversation(alice, ["the espresso machine is leaking water", "quarterly revenue grew"])
    run_jobs = use_embedder(alice)

    before = _search(alice, query="espresso machine leaking")
    run_jobs()
    after = _search(alice, query="espresso machine leaking")

    assert "vector" not in before[0]["signals"]
    assert after[0]["content"] == "the espresso machine is leaking water"
    assert after[0]["signals"]["vector"]["rank"] == 1
    assert after[0]["signals"]["vector"]["score"] > 0.5


@pytest.mark.parametrize(
    "body, field",
    [
        ({"query": ""}, "query"),
        ({"query": "   "}, "query"),
        ({}, "query"),
        ({"query": "x", "top_k": 0}, "top_k"),
        ({"query": "x", "top_k": 51}, "top_k"),
        ({"query": "x", "scopes": ["everything"]}, "scopes"),
        ({"query": "x", "scopes": []}, "scopes"),
        ({"query": "x", "message_range": {"before": 99, "after": 1}}, "message_range"),
        ({"query": "x", "thread_id": "nope"}, "thread_id"),
        ({"query": "x", "sort": "new"}, "sort"),
    ],
)
def test_it_rejects_bad_search_input(alice, body, field):
    response = alice.post("/api/v1/search", body)

    assert response.status_code == 400
    assert field in response.json()["error"]["details"]


def test_unknown_thread_resource_or_knowledge_base_is_a_404(alice, bob):
    theirs = bob.new_thread()

    for body in (
        {"query": "x", "thread_id": theirs["id"]},
        {"query": "x", "resource_id": "nobody"},
        {"query": "x", "scopes": ["knowledge"], "knowledge_base": "missing"},
    ):
        response = alice.post("/api/v1/search", body)

        assert response.status_code == 404, body
        assert response.json()["error"]["code"] == "not_found"


def test_another_agents_thread_is_a_404_even_when_other_scopes_find_hits(alice, bob):
    mine = _store_secret_everywhere(alice)
    theirs = bob.new_thread()
    bob.append(theirs["id"], {"role": "user", "content": SECRET})
    every_scope = list(RESULT_TYPE)

    response = alice.post(
        "/api/v1/search", {"query": SECRET, "scopes": every_scope, "thread_id": theirs["id"]}
    )

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    [message] = Message.objects.filter(pk=mine["message"])
    own = _search(alice, query=SECRET, scopes=every_scope, thread_id=str(message.thread_id))
    assert sorted(r["id"] for r in own) == sorted(mine.values())


def test_a_query_of_only_stopwords_finds_nothing_lexically_but_answers(alice):
    _conversation(alice, ["what is this"])

    assert _search(alice, query="what is the") == []


def test_new_messages_are_embedded_in_the_background_not_in_the_request(alice, use_embedder):
    run_jobs = use_embedder(alice)
    run_jobs()
    thread = _conversation(alice, ["a brand new espresso complaint"])

    [hit] = _search(alice, query="espresso complaint", thread_id=thread["id"])
    assert "vector" not in hit["signals"]
    assert job_run_pending() == 1
    [hit] = _search(alice, query="espresso complaint", thread_id=thread["id"])
    assert hit["signals"]["vector"]["rank"] == 1


def test_tool_calls_are_found_by_tool_name_and_payload(alice):
    thread = alice.new_thread()
    alice.append(
        thread["id"],
        {
            "role": "assistant",
            "kind": "tool_call",
            "name": "weather_lookup",
            "payload": {"city": "Reykjavik"},
        },
    )

    [by_payload] = _search(alice, query="Reykjavik")
    [by_name] = _search(alice, query="weather_lookup")

    assert by_payload["seq"] == by_name["seq"] == 1
    assert by_payload["type"] == "message"


def test_message_hits_and_their_ranges_rebuild_the_chat_messages(alice):
    thread = alice.new_thread()
    call = {"carrier": "DHL", "include_events": True}
    result = {"status": "in transit", "hub": "Leipzig"}
    alice.append(
        thread["id"],
        {"role": "user", "content": "where is parcel 7781?"},
        {"role": "assistant", "kind": "tool_call", "name": "track_parcel", "payload": call},
        {"role": "tool", "kind": "tool_result", "name": "track_parcel", "payload": result},
        {"role": "assistant", "content": "It is in transit."},
    )

    [hit] = _search(
        alice,
        query="Leipzig",
        top_k=1,
        thread_id=thread["id"],
        message_range={"before": 1, "after": 1},
    )

    assert (hit["seq"], hit["role"], hit["kind"], hit["name"]) == (
        3,
        "tool",
        "tool_result",
        "track_parcel",
    )
    assert hit["payload"] == result and hit["content"] == ""
    [before] = hit["context"]["before"]
    [after] = hit["context"]["after"]
    assert (before["role"], before["kind"], before["name"], before["payload"]) == (
        "assistant",
        "tool_call",
        "track_parcel",
        call,
    )
    assert (after["role"], after["kind"], after["content"], after["payload"]) == (
        "assistant",
        "message",
        "It is in transit.",
        None,
    )


def test_knowledge_and_episodic_hits_carry_no_message_fields(alice):
    alice.post(
        "/api/v1/memory/upsert", {"content": "ferry timetable: nine and noon", "namespace": "ops"}
    )
    config_update(agent=alice.agent, changes={"episodic_approval_required": False}, changed_by="t")
    alice.post(
        "/api/v1/episodic", {"content": "Ann takes the nine o'clock ferry", "resource_id": "ann"}
    )
    job_run_pending()

    results = _search(alice, query="ferry nine", scopes=["knowledge", "episodic"])

    assert {r["type"] for r in results} == {"knowledge", "episodic"}
    for r in results:
        assert (r["seq"], r["role"], r["kind"], r["name"], r["payload"], r["context"]) == (
            (None,) * 6
        )


def test_the_thread_is_looked_up_only_when_no_message_hit_proves_it_the_agents(alice):
    thread = _conversation(alice, ["the harbour crane is down", "lunch"])

    with recorded_sql() as queries:
        found = _search(alice, query="harbour crane", thread_id=thread["id"])
        lookups = sum('FROM "threads_thread"' in sql for sql in queries)
        nothing = _search(alice, query="zeppelin", thread_id=thread["id"])

    assert [hit["seq"] for hit in matched(found)] == [1] and lookups == 0
    assert nothing == []
    assert sum('FROM "threads_thread"' in sql for sql in queries) == 1


@pytest.mark.parametrize(
    ("body", "name"),
    [
        ({"scopes": ["notes"], "thread_id": "01a22451-bf4b-7653-bd55-fcfa25c03ad3"}, "thread_id"),
        (
            {"scopes": ["knowledge"], "thread_id": "01a22451-bf4b-7653-bd55-fcfa25c03ad3"},
            "thread_id",
        ),
        ({"scopes": ["notes"], "resource_id": "ann"}, "resource_id"),
        ({"scopes": ["messages"], "knowledge_base": "manual"}, "knowledge_base"),
        ({"scopes": ["episodic"], "message_range": {"before": 1, "after": 1}}, "message_range"),
    ],
)
def test_a_filter_that_narrows_none_of_the_scopes_is_refused_naming_it(alice, body, name):
    response = alice.post("/api/v1/search", {"query": "walrus", **body})

    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert list(error["details"]) == [name]
    assert error["message"].startswith(f"{name}: Narrows the ")
    assert "only; add " in error["message"]
