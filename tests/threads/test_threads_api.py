import pytest

from apps.tenancy.models import Resource
from apps.threads.models import Thread


def test_it_creates_a_thread_with_a_resource(alice):
    response = alice.post(
        "/api/v1/threads", {"resource_id": "user-1", "title": "Support", "metadata": {"a": 1}}
    )

    assert response.status_code == 201
    body = response.json()
    assert body["resource_id"] == "user-1"
    assert body["title"] == "Support"
    assert body["metadata"] == {"a": 1}
    assert body["last_seq"] == 0


def test_it_resolves_an_existing_thread_by_channel_and_external_id(alice):
    first = alice.post("/api/v1/threads", {"channel": "telegram", "external_id": "42"})
    again = alice.post("/api/v1/threads", {"channel": "telegram", "external_id": "42"})
    other_chat = alice.post("/api/v1/threads", {"channel": "telegram", "external_id": "43"})

    assert first.status_code == 201
    assert again.status_code == 200
    assert again.json()["id"] == first.json()["id"]
    assert other_chat.status_code == 201
    assert other_chat.json()["id"] != first.json()["id"]


def test_resolving_a_thread_gives_it_only_as_asked_else_a_409_naming_the_fields(alice):
    chat = {"channel": "telegram", "external_id": "42"}
    made = alice.post(
        "/api/v1/threads", {**chat, "resource_id": "ann", "title": "Ann", "metadata": {"a": 1}}
    ).json()

    as_made = alice.post(
        "/api/v1/threads", {**chat, "resource_id": "ann", "title": "Ann", "metadata": {"a": 1}}
    )
    left_out = alice.post("/api/v1/threads", chat)
    other_user = alice.post("/api/v1/threads", {**chat, "resource_id": "bob"})
    other_title = alice.post("/api/v1/threads", {**chat, "title": "Ann's", "metadata": {"a": 2}})

    assert as_made.status_code == left_out.status_code == 200
    assert as_made.json()["id"] == left_out.json()["id"] == made["id"]
    assert other_user.status_code == 409
    error = other_user.json()["error"]
    assert error["message"].startswith("resource_id: ")
    assert error["details"] == {"thread_id": made["id"], "held": {"resource_id": "ann"}}
    assert not Resource.objects.filter(external_id="bob").exists()
    assert other_title.status_code == 409
    error = other_title.json()["error"]
    assert error["message"].startswith("title, metadata: ")
    assert f"PATCH /api/v1/threads/{made['id']}" in error["message"]
    assert error["details"]["held"] == {"title": "Ann", "metadata": {"a": 1}}
    thread = Thread.objects.get(id=made["id"])
    assert (thread.resource.external_id, thread.title, thread.metadata) == ("ann", "Ann", {"a": 1})


def test_a_thread_without_an_end_user_is_not_resolved_for_one(alice):
    made = alice.new_thread(channel="web", external_id="7")

    response = alice.post(
        "/api/v1/threads", {"channel": "web", "external_id": "7", "resource_id": "ann"}
    )

    assert response.status_code == 409
    assert response.json()["error"]["details"] == {
        "thread_id": made["id"],
        "held": {"resource_id": None},
    }


def test_the_same_external_id_is_a_different_thread_for_another_agent(alice, bob):
    mine = alice.new_thread(channel="telegram", external_id="42")
    theirs = bob.post("/api/v1/threads", {"channel": "telegram", "external_id": "42"})

    assert theirs.status_code == 201
    assert theirs.json()["id"] != mine["id"]


def test_it_requires_external_id_with_channel(alice):
    response = alice.post("/api/v1/threads", {"channel": "telegram"})

    assert response.status_code == 400
    assert response.json()["error"]["message"].startswith("external_id:")


def test_an_external_id_without_a_channel_is_one_of_no_channel_however_said(alice):
    left_out = alice.post("/api/v1/threads", {"external_id": "zzz"})
    empty = alice.post("/api/v1/threads", {"channel": "", "external_id": "zzz"})
    elsewhere = alice.post("/api/v1/threads", {"channel": "web", "external_id": "zzz"})

    assert (left_out.status_code, empty.status_code, elsewhere.status_code) == (201, 200, 201)
    assert empty.json()["id"] == left_out.json()["id"] != elsewhere.json()["id"]
    assert empty.json()["channel"] == ""


def test_it_lists_threads_newest_first_with_filters_and_cursor_pages(alice):
    made = [
        alice.new_thread(resource_id=f"user-{i % 2}", channel="web", external_id=str(i))
        for i in range(5)
    ]

    page = alice.get("/api/v1/threads", {"limit": 2}).json()
    second = alice.client.get(page["next"]).json()
    only_user_1 = alice.get("/api/v1/threads", {"resource_id": "user-1"}).json()

    assert [t["id"] for t in page["results"]] == [made[4]["id"], made[3]["id"]]
    assert [t["id"] for t in second["results"]] == [made[2]["id"], made[1]["id"]]
    assert {t["id"] for t in only_user_1["results"]} == {made[1]["id"], made[3]["id"]}


@pytest.mark.parametrize(
    "params, expected",
    [
        ({"channel": "telegram"}, ["tg-2", "tg-1"]),
        ({"channel": "web"}, ["web-1"]),
        ({"channel": ""}, ["none"]),  # an empty channel means threads made without one
        ({"channel": "sms"}, []),
        ({"channel": "telegram", "resource_id": "user-2"}, ["tg-2"]),
    ],
)
def test_it_lists_only_the_threads_of_a_channel(alice, bob, params, expected):
    alice.new_thread(channel="telegram", external_id="1", title="tg-1", resource_id="user-1")
    alice.new_thread(channel="web", external_id="1", title="web-1")
    alice.new_thread(title="none")
    alice.new_thread(channel="telegram", external_id="2", title="tg-2", resource_id="user-2")
    bob.new_thread(channel="telegram", external_id="1", title="bob's")

    response = alice.get("/api/v1/threads", params)

    assert response.status_code == 200
    assert [t["title"] for t in response.json()["results"]] == expected


def test_it_updates_title_and_metadata(alice):
    thread = alice.new_thread(title="old")

    response = alice.patch(
        f"/api/v1/threads/{thread['id']}", {"title": "new", "metadata": {"x": 2}}
    )

    assert response.status_code == 200
    assert alice.get(f"/api/v1/threads/{thread['id']}").json()["title"] == "new"
    assert response.json()["metadata"] == {"x": 2}


def test_it_deletes_a_thread_with_its_messages(alice):
    thread = alice.new_thread()
    alice.append(thread["id"], {"role": "user", "content": "hello"})

    response = alice.delete(f"/api/v1/threads/{thread['id']}")

    assert response.status_code == 204
    assert alice.get(f"/api/v1/threads/{thread['id']}").status_code == 404
    assert alice.get(f"/api/v1/threads/{thread['id']}/messages").status_code == 404


@pytest.mark.parametrize(
    "body, field",
    [
        ({"resource_id": ""}, "resource_id"),
        ({"title": "x" * 301}, "title"),
        ({"metadata": [1, 2]}, "metadata"),
        ({"channel": "web", "external_id": "1", "colour": "red"}, "colour"),
    ],
)
def test_it_rejects_bad_thread_input(alice, body, field):
    response = alice.post("/api/v1/threads", body)

    assert response.status_code == 400
    assert field in response.json()["error"]["details"]
