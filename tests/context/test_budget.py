"""The planned budget: each block's share of max_tokens, what flows on, and what it buys."""

import pytest

from apps.context.budget import FLOW_ORDER, budget_flow, budget_plan
from apps.jobs.services import job_run_pending
from apps.memconfig.schema import CONTEXT_SHARES
from tests.context.conftest import block, context, talk

SHARES = {f"context_share_{name}": default for name, default, _ in CONTEXT_SHARES}


def _filler(n: int) -> str:
    return f"step {n}: " + " ".join(f"word{k}" for k in range(80))


def _long_observed_thread(alice, configure, *, answer: str, steps: int = 40) -> dict:
    """A thread whose first answer holds `answer` at the end of a long reply, then `steps` long
    messages, observed with a low threshold so that its observations are far larger than a
    small budget (and, made without a model, they cut a long reply before its end)."""
    configure(alice, observer_message_tokens=1000, recent_window=3)
    thread = alice.new_thread(resource_id="ann")
    reply = "Let me look that up for you. " + "checking the records " * 30 + answer
    talk(alice, thread["id"], "what is the gate code?", reply, *[_filler(n) for n in range(steps)])
    job_run_pending()
    return thread


def test_it_plans_shares_and_lets_unused_ones_flow_in_order():
    config = dict.fromkeys(SHARES, 0.0) | {"context_share_recall": 0.5, "context_share_recent": 0.5}
    planned = budget_plan(config=config, max_tokens=1000, history="observations")
    assert planned["recall"] == planned["recent"] == 500
    assert sum(planned.values()) == 1000

    budget = budget_flow(planned=planned, needs={"recall": 100, "recent": 2000}, max_tokens=1000)

    assert budget.granted["recall"] == 100
    assert budget.granted["recent"] == 900  # its 500 and the 400 recall left
    assert sum(budget.granted.values()) <= 1000


def test_it_flows_to_the_blocks_in_their_documented_order():
    planned = dict.fromkeys(FLOW_ORDER, 0) | {"notes": 300}
    needs = {"recall": 200, "recent": 200, "memory": 200}

    budget = budget_flow(planned=planned, needs=needs, max_tokens=300)

    assert (budget.granted["recall"], budget.granted["recent"], budget.granted["memory"]) == (
        200,
        100,
        0,
    )


def test_it_makes_room_for_the_newest_message_whatever_the_shares():
    planned = budget_plan(
        config=SHARES, max_tokens=1000, history="observations", least={"recent": 700}
    )

    assert planned["recent"] == 700
    assert sum(planned.values()) <= 1000


def test_recall_finds_an_old_answer_when_observations_exceed_the_budget(alice, configure):
    answer = "the gate code of the north depot is 4471"
    thread = _long_observed_thread(alice, configure, answer=answer)
    big = context(alice, thread["id"], query="gate code north depot", max_tokens=200_000)
    assert block(big, "observations")["tokens"] > 2000  # observations alone exceed the budget

    given = context(alice, thread["id"], query="gate code north depot", max_tokens=2000)

    assert given["tokens"] <= 2000
    assert answer not in block(given, "observations")["text"]
    recall = block(given, "recall")
    assert answer in recall["text"] and 2 in {item["seq"] for item in recall["items"]}
    assert not any("not searched" in w["message"] for w in given["warnings"])


def test_recall_finds_a_message_of_the_recent_window_the_budget_does_not_show(alice):
    # 56 messages, the answer 17 from the end: inside the recent window (20), but a small
    # budget shows fewer recent messages than that, so only recall can bring it.
    thread = alice.new_thread()["id"]
    chat = [f"Small talk number {n} about the weather and the weekend plans." for n in range(56)]
    chat[39] = "Your card payment was declined by the issuer with code 05."
    talk(alice, thread, *chat)

    given = context(alice, thread, query="why was my card payment declined?", max_tokens=500)

    shown = given["system_prompt"] + "".join(m["content"] for m in given["messages"])
    assert 40 not in {m["seq"] for m in given["messages"]}
    assert "declined by the issuer with code 05" in shown
    assert 40 in {item["seq"] for item in block(given, "recall")["items"]}


def test_each_block_stays_within_what_it_was_granted(alice, remember, configure):
    for n in range(20):
        remember(alice, f"the gate code story number {n} " + "detail " * 30)
    thread = _long_observed_thread(alice, configure, answer="the gate code is 4471")

    given = context(alice, thread["id"], query="gate code story", max_tokens=3000)

    assert given["tokens"] <= 3000
    assert sum(b["granted_tokens"] for b in given["blocks"]) <= 3000
    for answered in given["blocks"]:
        assert answered["tokens"] <= answered["granted_tokens"], answered["name"]
    # Memory wants more than its share: it keeps its share, and takes what the blocks before
    # it in the flow left.
    memory = block(given, "memory")
    assert memory["granted_tokens"] >= memory["planned_tokens"] > 0
    assert memory["items"] and "memory" in {w["block"] for w in given["warnings"]}


def test_a_share_too_small_for_its_first_piece_flows_on(alice, remember, configure):
    # One entry larger than memory's share: the block shows nothing, and its share goes to
    # the recent messages, which the budget cuts, instead of going unused.
    configure(alice, semantic_recall_enabled=False)
    remember(alice, "the lighthouse keeper's log " + "detail " * 120)
    thread = alice.new_thread(resource_id="ann")["id"]
    talk(alice, thread, *[f"the lighthouse keeper, line {n} " + "x " * 20 for n in range(40)])

    given = context(alice, thread, query="lighthouse keeper log", max_tokens=800)

    memory, shares = block(given, "memory"), {b["name"]: b for b in given["blocks"]}
    assert memory["planned_tokens"] > 0 and memory["items"] == [] and memory["granted_tokens"] == 0
    assert shares["recent"]["granted_tokens"] > shares["recent"]["planned_tokens"]
    assert given["tokens"] > 800 - 40  # all but less than one more message's worth is used


def test_what_recall_cannot_fit_of_its_share_flows_on(alice, configure):
    # Matches of about 160 tokens each and a recall share of about 240: one fits, the next
    # does not, and the rest of the share goes to the recent messages instead of going unused
    # (what fits beside the one is shown: the lines of its session the search lifts).
    only = {"recall": 0.3, "recent": 0.7}
    configure(
        alice,
        semantic_recall_range_before=0,
        semantic_recall_range_after=0,
        **{name: only.get(name.removeprefix("context_share_"), 0.0) for name in SHARES},
    )
    thread = alice.new_thread(resource_id="ann")["id"]
    talk(alice, thread, *[f"the lighthouse keeper's log {n} " + "detail " * 150 for n in range(4)])
    talk(alice, thread, *[f"the harbour, line {n} " + "x " * 20 for n in range(40)])

    given = context(alice, thread, query="lighthouse keeper log", max_tokens=800)

    recall, recent = block(given, "recall"), block(given, "recent")
    # Recall left matches out for want of room, and passed on what it could not use.
    assert "recall" in {w["block"] for w in given["warnings"]}
    assert recall["granted_tokens"] == recall["tokens"] < recall["planned_tokens"]
    assert recent["granted_tokens"] > recent["planned_tokens"]
    assert given["tokens"] > 800 - 40  # all but less than one more message's worth is used


def test_an_unused_share_flows_on_to_recall_and_the_recent_window(alice, configure):
    configure(alice, recent_window=6)  # not observed yet: all messages are candidates
    thread = alice.new_thread()
    talk(
        alice,
        thread["id"],
        *[f"the lighthouse keeper part {n} " + "x " * 60 for n in range(5)],
        *[f"the harbour part {n} " + "y " * 60 for n in range(55)],
    )

    given = context(alice, thread["id"], query="lighthouse keeper", max_tokens=2000)

    for name in ("memory", "knowledge", "notes", "user_profile", "session_memory"):
        answered = block(given, name)
        assert answered["planned_tokens"] > 0 and answered["granted_tokens"] == 0, name
    recall, recent = block(given, "recall"), block(given, "recent")
    assert recall["items"] and recall["granted_tokens"] >= recall["planned_tokens"] // 2
    assert recent["granted_tokens"] > recent["planned_tokens"]
    # What the empty blocks left was used, not lost.
    assert given["tokens"] > recall["planned_tokens"] + recent["planned_tokens"]


@pytest.mark.parametrize("name", [name for name, _, _ in CONTEXT_SHARES])
def test_each_share_setting_decides_its_blocks_plan(alice, configure, name):
    thread = alice.new_thread(resource_id="ann")
    talk(alice, thread["id"], "hello")
    shown = {"profile": "user_profile", "history": "observations"}.get(name, name)

    before = block(context(alice, thread["id"], max_tokens=4000), shown)["planned_tokens"]
    configure(alice, **{f"context_share_{name}": 0})
    nothing = block(context(alice, thread["id"], max_tokens=4000), shown)["planned_tokens"]
    configure(alice, **{f"context_share_{name}": 1})
    most = block(context(alice, thread["id"], max_tokens=4000), shown)["planned_tokens"]

    assert nothing < before < most
    if name != "recent":  # the recent block always has room for the newest message
        assert nothing == 0


def test_entries_knowledge_and_notes_below_the_floor_never_enter(alice, remember, use_embedder):
    run_jobs = use_embedder(alice)
    alice.post("/api/v1/knowledge-bases", {"slug": "ops", "name": "Ops"})
    for title, text in (
        ("refunds", "Refunds are paid within 5 days after the deploy is verified."),
        ("tea", "Likes tea."),
        ("binary", "\x01\x02binary"),
    ):
        response = alice.post(
            "/api/v1/knowledge-bases/ops/documents", {"title": title, "text": text}
        )
        assert response.status_code == 202, response.content
    remember(alice, "Likes tea.")
    remember(alice, "The refund of order 77 waits for the deploy.")
    run_jobs()
    thread = alice.new_thread(resource_id="ann")
    talk(alice, thread["id"], "refund and deploy")
    query = "refund and deploy"

    given = context(alice, thread["id"], query=query)
    searched = alice.post(
        "/api/v1/search",
        {"query": query, "scopes": ["knowledge", "episodic"], "resource_id": "ann", "top_k": 20},
    ).json()["results"]

    assert "tea" not in given["system_prompt"] and "binary" not in given["system_prompt"]
    assert "Refunds are paid" in block(given, "knowledge")["text"]
    assert "order 77" in block(given, "memory")["text"]
    shown = {item["id"] for name in ("knowledge", "memory") for item in block(given, name)["items"]}
    assert shown == {hit["id"] for hit in searched}


def test_without_a_query_the_latest_user_message_is_the_query_and_is_echoed(alice):
    thread = alice.new_thread()
    empty = context(alice, thread["id"])
    talk(alice, thread["id"], "where is the ferry timetable?", "on the pier")

    default = context(alice, thread["id"])
    asked = context(alice, thread["id"], query="pier")

    assert (empty["query"], empty["query_source"]) == ("", "none")
    assert (default["query"], default["query_source"]) == (
        "where is the ferry timetable?",
        "latest_user_message",
    )
    assert (asked["query"], asked["query_source"]) == ("pier", "request")
    replay = alice.get(f"/api/v1/contexts/{default['context_id']}").json()
    assert (replay["query"], replay["query_source"]) == (default["query"], "latest_user_message")


def test_observations_are_chosen_for_the_question_and_the_newest(alice, configure):
    configure(alice, observer_message_tokens=300, recent_window=2)
    thread = alice.new_thread()
    texts = [_filler(n) for n in range(30)]
    texts[4] = "the zeppelin hangar keys are with Mrs Okafor " + " ".join(["aside"] * 60)
    talk(alice, thread["id"], *texts)
    job_run_pending()
    full = block(context(alice, thread["id"], query="x", max_tokens=200_000), "observations")
    configure(alice, context_share_history=0.5)

    given = context(alice, thread["id"], query="who has the zeppelin keys", max_tokens=2000)

    observations = block(given, "observations")
    kept = [item["id"] for item in observations["items"]]
    assert 0 < len(kept) < len(full["items"])
    assert "zeppelin" in observations["text"]
    assert kept[-1] == full["items"][-1]["id"]  # the newest stays
    seqs = [item["seq"] for item in observations["items"]]
    assert seqs == sorted(seqs)  # in time order
    warning = next(w for w in given["warnings"] if w["block"] == "observations")
    assert "(messages #" in warning["message"] and "granted" in warning["message"]


def test_recall_leaves_out_what_a_shown_observation_quotes(alice, configure):
    configure(alice, observer_message_tokens=200, recent_window=2)
    thread = alice.new_thread()
    talk(
        alice,
        thread["id"],
        *[f"Please check ticket {n}: router XR-{n} reboots " + "ok " * 15 for n in range(12)],
    )
    job_run_pending()

    given = context(alice, thread["id"], query="router reboots", max_tokens=32_000)

    observations = block(given, "observations")  # a user's requests are quoted verbatim
    assert "Please check ticket 0: router XR-0 reboots" in observations["text"]
    shown = " ".join(observations["text"].split())
    whole = "Please check ticket {n}: router XR-{n} reboots" + " ok" * 15
    quoted = {n for n in range(12) if whole.format(n=n) in shown}
    recalled = {item["seq"] for item in block(given, "recall")["items"]}
    assert quoted and not recalled & {n + 1 for n in quoted}  # seq n+1 is Ticket n
    assert recalled & {n + 1 for n in set(range(12)) - quoted}  # what they cut is recalled


def test_the_observations_block_follows_the_observer_and_the_reflector(alice, configure):
    """A process keeps each thread's observations block until they change: new observations
    and a reflection that supersedes them show in the very next context."""
    configure(alice, observer_message_tokens=300, recent_window=2)
    thread = alice.new_thread()
    talk(alice, thread["id"], *[_filler(n) for n in range(8)])
    job_run_pending()
    first = block(context(alice, thread["id"], query="word1"), "observations")["items"]
    assert first

    talk(alice, thread["id"], *[_filler(n) for n in range(8, 16)])
    job_run_pending()
    second = block(context(alice, thread["id"], query="word1"), "observations")["items"]
    assert {item["id"] for item in first} < {item["id"] for item in second}
    assert second[-1]["seq"] > first[-1]["seq"]

    configure(alice, reflector_observation_tokens=100)
    talk(alice, thread["id"], *[_filler(n) for n in range(16, 20)])
    job_run_pending()
    third = block(context(alice, thread["id"], query="word1"), "observations")["items"]
    assert third and not {item["id"] for item in second} <= {item["id"] for item in third}
    assert len(third) < len(second)  # the reflection stands for the rows it superseded
