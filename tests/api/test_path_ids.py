"""An id in a path is read as a UUID is: in either case, with or without its dashes."""

import uuid

import pytest


@pytest.mark.parametrize("spelt", [str.upper, lambda text: text.replace("-", "")])
def test_an_id_written_back_in_upper_case_or_without_dashes_finds_its_thread(alice, spelt):
    thread = alice.new_thread()
    path = f"/api/v1/threads/{spelt(thread['id'])}"

    read = alice.get(path)
    appended = alice.post(f"{path}/messages", {"messages": [{"role": "user", "content": "hi"}]})

    assert read.status_code == 200, read.content
    assert read.json()["id"] == thread["id"]  # answered as the server writes it
    assert appended.status_code == 201, appended.content
    assert alice.get(f"/api/v1/threads/{thread['id']}/messages").json()["results"][0][
        "content"
    ] == ("hi")


def test_an_unknown_id_in_upper_case_is_no_such_thread(alice):
    response = alice.get(f"/api/v1/threads/{str(uuid.uuid4()).upper()}")

    assert response.status_code == 404
    assert "No such URL" not in response.json()["error"]["message"]


def test_what_is_no_uuid_is_still_no_such_url(alice):
    thread = alice.new_thread()

    response = alice.get(f"/api/v1/threads/{{{thread['id']}}}")

    assert response.status_code == 404
    assert response.json()["error"]["message"].startswith("No such URL")


def test_page_links_write_the_id_as_the_server_does(alice):
    thread = alice.new_thread()
    run = alice.post(f"/api/v1/threads/{thread['id']}/runs", {}).json()
    for _ in range(2):
        alice.post(f"/api/v1/runs/{run['id']}/checkpoints", {"state": {}})

    for spelt in (run["id"].upper(), run["id"].replace("-", "")):
        page = alice.get(f"/api/v1/runs/{spelt}/checkpoints", {"limit": 1}).json()

        assert f"/api/v1/runs/{run['id']}/checkpoints?" in page["next"], page["next"]
        assert "limit=1" in page["next"] and "cursor=" in page["next"]
        following = alice.get(page["next"])
        assert following.status_code == 200 and len(following.json()["results"]) == 1
