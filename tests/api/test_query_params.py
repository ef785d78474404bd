"""A query parameter the server cannot use is a 400 naming it, as a body field would be.

PostgreSQL fails on a NUL in any query it is given, so these were 500s there.
"""

import pytest

# Each API list and a query parameter it filters by; {thread} is filled in with alice's thread.
FILTERS = [
    ("/api/v1/threads", "channel"),
    ("/api/v1/threads", "resource_id"),
    ("/api/v1/threads/{thread}/iterations", "task"),
    ("/api/v1/episodic", "resource_id"),
]

# Raw, percent-encoded values, and what the error says about each.
BAD_VALUES = [
    pytest.param("%00", "NUL character", id="nul"),
    pytest.param("a%00b", "NUL character", id="nul-inside"),
    pytest.param("%ED%A0%80", "not valid UTF-8", id="lone-surrogate"),  # \ud800 as bytes
    pytest.param("%ED%BF%BF", "not valid UTF-8", id="lone-low-surrogate"),  # \udfff
    pytest.param("%FF", "not valid UTF-8", id="not-utf8"),
]


@pytest.fixture
def thread(alice) -> str:
    return alice.new_thread(channel="télégram", external_id="1", resource_id="cust-1")["id"]


@pytest.mark.parametrize("path, name", FILTERS)
@pytest.mark.parametrize("raw, said", BAD_VALUES)
def test_it_refuses_a_query_parameter_it_cannot_use_naming_it(alice, thread, path, name, raw, said):
    response = alice.get(f"{path.format(thread=thread)}?limit=5&{name}={raw}")

    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert error["message"].startswith(f"{name}: The query parameter")
    assert said in error["message"]
    assert list(error["details"]) == [name]


def test_it_names_a_parameter_whose_own_name_holds_a_nul(alice):
    response = alice.get("/api/v1/threads?chan%00nel=web")

    assert response.status_code == 400
    assert response.json()["error"]["message"].startswith(
        "'chan\\x00nel': The query parameter's name contains the NUL character"
    )


def test_it_still_filters_by_a_value_outside_ascii(alice, thread):
    response = alice.get("/api/v1/threads", {"channel": "télégram", "resource_id": "cust-1"})

    assert response.status_code == 200
    assert [t["id"] for t in response.json()["results"]] == [thread]
