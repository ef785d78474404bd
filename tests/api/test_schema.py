from apps.tenancy.schema import ApiKeyAuthenticationScheme


def test_the_schema_is_openapi_3_and_lists_the_v1_contract(client, db):
    schema = client.get("/api/schema/", {"format": "json"}).json()

    assert schema["openapi"].startswith("3.")
    expected = {
        "/api/v1/threads",
        "/api/v1/threads/{thread_id}",
        "/api/v1/threads/{thread_id}/messages",
        "/api/v1/threads/{thread_id}/runs",
        "/api/v1/threads/{thread_id}/plan",
        "/api/v1/threads/{thread_id}/iterations",
        "/api/v1/runs/{run_id}",
        "/api/v1/runs/{run_id}/finish",
        "/api/v1/runs/{run_id}/checkpoints",
        "/api/v1/runs/{run_id}/snapshot",
        "/api/v1/checkpoints/{checkpoint_id}/resume",
        "/api/v1/config",
    }
    assert expected <= set(schema["paths"])


def test_the_schema_declares_the_agent_key_as_an_http_bearer_scheme(client, db):
    schema = client.get("/api/schema/", {"format": "json"}).json()

    scheme = schema["components"]["securitySchemes"][ApiKeyAuthenticationScheme.name]
    assert (scheme["type"], scheme["scheme"]) == ("http", "bearer")
    v1 = [
        operation
        for path, item in schema["paths"].items()
        if path.startswith("/api/v1/")
        for operation in item.values()
    ]
    assert v1
    assert all(op["security"] == [{ApiKeyAuthenticationScheme.name: []}] for op in v1)


def test_the_docs_page_loads_its_assets_locally(client, db):
    page = client.get("/api/docs/")

    assert page.status_code == 200
    html = page.content.decode()
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in html
    assert "cdn" not in html.lower()
    asset = client.get("/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js")
    assert asset.status_code == 200
