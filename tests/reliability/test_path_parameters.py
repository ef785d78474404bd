"""A text parameter of the URL path that the database cannot store is a 400 naming it.

PostgreSQL fails on a NUL in any query it is given, so these were 500s there (a path segment
is percent-decoded as a query parameter is, and the views used it in a query as it came).
"""

import pytest

# Each route with a free-text path parameter, the parameter, and the method.
ROUTES = [
    pytest.param("get", "/api/v1/resources/{value}/profile", "resource_id", id="profile-get"),
    pytest.param("put", "/api/v1/resources/{value}/profile", "resource_id", id="profile-put"),
    pytest.param("delete", "/api/v1/resources/{value}", "resource_id", id="resource-forget"),
]


@pytest.mark.parametrize("method, path, name", ROUTES)
@pytest.mark.parametrize("raw", ["a%00b", "%00", "team/a%00b"])
def test_it_refuses_a_nul_in_a_path_parameter_naming_it(alice, method, path, name, raw):
    response = getattr(alice, method)(path.format(value=raw))

    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert error["message"].startswith(f"{name}: The path parameter contains the NUL character")
    assert list(error["details"]) == [name]


def test_it_refuses_it_before_authentication_too(anonymous, db):
    response = anonymous.delete("/api/v1/resources/a%00b")

    assert response.status_code == 400
    assert list(response.json()["error"]["details"]) == ["resource_id"]


def test_a_path_parameter_outside_ascii_or_with_a_slash_still_works(alice):
    for resource_id in ("cust-é", "team/ann"):
        put = alice.put(
            f"/api/v1/resources/{resource_id}/profile", {"version": 0, "content": "Likes tea."}
        )
        assert put.status_code == 200, put.content
        assert alice.get(f"/api/v1/resources/{resource_id}/profile").status_code == 200
        assert alice.delete(f"/api/v1/resources/{resource_id}").status_code == 200
