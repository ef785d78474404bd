import re

from playwright.sync_api import expect

from tests.conftest import make_actor


def _conversation():
    alice = make_actor("acme", "alice")
    thread = alice.new_thread(
        title="Billing dispute", resource_id="cust-9", channel="web", external_id="c9"
    )
    run = alice.post(f"/api/v1/threads/{thread['id']}/runs", {"name": "turn 1"}).json()
    alice.append(
        thread["id"],
        {"role": "user", "content": "I was charged twice for invoice 4417.", "run_id": run["id"]},
        {
            "role": "assistant",
            "kind": "tool_call",
            "name": "lookup_invoice",
            "payload": {"id": 4417},
            "run_id": run["id"],
        },
        {
            "role": "tool",
            "kind": "tool_result",
            "name": "lookup_invoice",
            "content": "two charges found",
            "run_id": run["id"],
        },
        {
            "role": "assistant",
            "content": "<script>alert('x')</script> I see two charges; refunding one.",
            "run_id": run["id"],
        },
    )
    alice.put(
        f"/api/v1/threads/{thread['id']}/plan",
        {"version": 0, "goal": "Refund the duplicate charge", "steps": [{"title": "verify"}]},
    )
    return thread


def test_an_operator_browses_to_a_thread_and_searches_inside_it(operator_login, page, shoot):
    thread = _conversation()
    shoot("dashboard")

    page.click("nav >> text=Threads")
    expect(page.locator("#thread-list")).to_contain_text("Billing dispute")
    shoot("threads")
    page.click("text=Billing dispute")
    expect(page.locator("h1")).to_have_text("Billing dispute")
    expect(page.locator(".timeline")).to_contain_text("charged twice for invoice 4417")
    expect(page.locator(".run-band")).to_contain_text("turn 1")
    expect(page.locator("aside")).to_contain_text("Refund the duplicate charge")
    expect(page.locator("#m-4 .content")).to_contain_text("<script>alert('x')</script>")

    page.fill("input[name=q]", "charged twice invoice")
    page.click("button:has-text('Search')")
    results = page.locator("#thread-search-results")
    expect(results.locator(".card").first).to_contain_text("charged twice for invoice 4417")
    expect(results.locator(".card").first).to_contain_text("lexical rank 1")
    shoot("thread-search")
    page.click("#thread-search-results a >> text=#1")
    expect(page.locator("#m-1")).to_be_visible()
    assert f"/console/threads/{thread['id']}/" in page.url


def test_long_threads_load_earlier_messages_on_demand(operator_login, page):
    alice = make_actor("acme", "alice")
    thread = alice.new_thread(title="Long")
    alice.append(
        thread["id"], *[{"role": "user", "content": f"message number {i}"} for i in range(1, 151)]
    )

    page.goto(f"{operator_login}/console/threads/{thread['id']}/")
    expect(page.locator(".msg")).to_have_count(100)
    page.click("text=Load earlier messages")

    expect(page.locator(".msg")).to_have_count(150)
    expect(page.locator("#m-1")).to_contain_text("message number 1")


def test_a_link_into_a_long_thread_loads_later_messages_too(operator_login, page, shoot):
    alice = make_actor("acme", "alice")
    thread = alice.new_thread(title="Long")
    alice.append(
        thread["id"], *[{"role": "user", "content": f"message number {i}"} for i in range(1, 251)]
    )

    page.goto(f"{operator_login}/console/threads/{thread['id']}/?seq=120#m-120")
    expect(page.locator(".msg")).to_have_count(100)
    expect(page.locator("#m-120")).to_have_class(re.compile(r"\bhighlight\b"))
    expect(page.locator("#m-120")).to_be_in_viewport()
    expect(page.locator(".msg.highlight")).to_have_count(1)
    shoot("highlighted")
    page.click("text=Load later messages")

    expect(page.locator(".msg")).to_have_count(181)
    expect(page.locator("#m-250")).to_contain_text("message number 250")
    expect(page.locator("text=Load later messages")).to_have_count(0)
    page.click("text=Load earlier messages")
    expect(page.locator(".msg")).to_have_count(250)
    seqs = page.locator(".msg").evaluate_all(
        "items => items.map((item) => Number(item.id.slice(2)))"
    )
    assert seqs == list(range(1, 251))


def test_a_thread_opened_at_a_seq_shows_that_message(operator_login, page):
    alice = make_actor("acme", "alice")
    thread = alice.new_thread(title="Parcels")["id"]
    for start in range(0, 120, 60):
        alice.append(
            thread, *[{"role": "user", "content": f"Parcel {start + n}?"} for n in range(60)]
        )
    page.set_viewport_size({"width": 1280, "height": 700})

    page.goto(f"{operator_login}/console/threads/{thread}/?seq=5")

    expect(page.locator("#m-5")).to_be_in_viewport()
