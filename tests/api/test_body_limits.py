"""Each kind of request body is held to its own documented limit, not Django's 2.5 MiB, and a
body is read only as sent: uncompressed, its Content-Length a byte count.

JSON bodies were refused at Django's DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MiB) whatever the API's
limits said: a 3 MB JSON artifact was a 413 while the same bytes as multipart were a 201.
"""

import gzip

import pytest

from apps.threads.models import Thread

MB = 1_000_000
MIB = 2**20


@pytest.fixture
def run(alice):
    thread = alice.new_thread()
    return alice.post(f"/api/v1/threads/{thread['id']}/runs", {"name": "build"}).json()


@pytest.fixture
def kb(alice):
    assert alice.post("/api/v1/knowledge-bases", {"slug": "manuals"}).status_code == 201
    return "/api/v1/knowledge-bases/manuals/documents"


def test_a_json_artifact_over_django_s_default_is_stored_up_to_its_own_limit(alice, run):
    created = alice.post(
        f"/api/v1/runs/{run['id']}/artifacts", {"name": "log.txt", "content": "x" * 3 * MB}
    )

    assert created.status_code == 201, created.content[:300]
    assert created.json()["size_bytes"] == 3 * MB


def test_a_json_artifact_over_artifact_max_bytes_is_a_413_naming_it(alice, run, settings):
    over = settings.ARTIFACT_MAX_BYTES + 1

    refused = alice.post(
        f"/api/v1/runs/{run['id']}/artifacts", {"name": "a", "content": "x" * over}
    )

    assert refused.status_code == 413
    error = refused.json()["error"]
    assert error["code"] == "payload_too_large" and "ARTIFACT_MAX_BYTES" in error["message"]
    assert error["details"] == {"limit_bytes": settings.ARTIFACT_MAX_BYTES}


def test_a_message_batch_over_django_s_default_is_stored(alice):
    thread = alice.new_thread()
    batch = [{"role": "user", "content": "y" * 150_000} for _ in range(20)]  # 3 MB

    stored = alice.post(f"/api/v1/threads/{thread['id']}/messages", {"messages": batch})

    assert stored.status_code == 201, stored.content[:300]
    assert len(stored.json()["messages"]) == 20


def test_a_json_document_takes_the_upload_limit_not_the_api_one(alice, kb, settings):
    text = "A line of the manual about valves and pumps.\n" * (10 * MIB // 45)  # 10 MiB

    created = alice.post(kb, {"title": "Manual", "text": text})

    assert settings.API_MAX_BODY_BYTES < len(text) < settings.KNOWLEDGE_MAX_UPLOAD_BYTES
    assert created.status_code == 202, created.content[:300]


@pytest.mark.parametrize(
    "path, limit_setting",
    [
        ("/api/v1/threads", "API_MAX_BODY_BYTES"),
        ("/api/v1/knowledge-bases/manuals/documents", "KNOWLEDGE_MAX_UPLOAD_BYTES"),
        ("/mcp", "API_MAX_BODY_BYTES"),
    ],
)
def test_a_body_over_its_kind_s_limit_is_a_413_before_it_is_read(
    alice, kb, settings, path, limit_setting
):
    setattr(settings, limit_setting, 3 * MIB)  # above Django's 2.5 MiB, to tell them apart
    body = '{"title": "t", "text": "' + "z" * (3 * MIB) + '"}'

    refused = alice.client.post(path, body, content_type="application/json")

    assert refused.status_code == 413
    error = refused.json()["error"]
    assert error["code"] == "payload_too_large"
    assert error["details"] == {"limit_bytes": 3 * MIB}
    assert f"the limit is {3 * MIB} bytes" in error["message"]


def test_an_mcp_call_over_django_s_default_is_served(alice):
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "append_messages",
            "arguments": {
                "channel": "cli",
                "external_id": "big",
                "messages": [{"role": "user", "content": "w" * 150_000}] * 20,  # 3 MB
            },
        },
    }

    answer = alice.client.post(
        "/mcp",
        call,
        format="json",
        HTTP_ACCEPT="application/json, text/event-stream",
        HTTP_MCP_PROTOCOL_VERSION="2025-06-18",
    )

    assert answer.status_code == 200, answer.content[:300]
    assert not answer.json()["result"].get("isError"), answer.json()["result"]["content"]


@pytest.mark.parametrize("encoding", ["gzip", "br", "deflate"])
def test_a_compressed_body_is_a_415_naming_content_encoding(alice, encoding):
    body = gzip.compress(b'{"title": "zipped"}') if encoding == "gzip" else b'{"title": "x"}'

    response = alice.client.post(
        "/api/v1/threads", body, content_type="application/json", HTTP_CONTENT_ENCODING=encoding
    )

    assert response.status_code == 415
    assert response.json()["error"]["message"].startswith(f"Content-Encoding: '{encoding}'")
    assert not Thread.objects.exists()


@pytest.mark.parametrize("length", ["abc", "0x10", "1e2", "-5", "１"])
def test_a_content_length_that_is_no_byte_count_is_a_400_naming_it(alice, length):
    response = alice.client.post(
        "/api/v1/threads",
        b'{"title": "framed"}',
        content_type="application/json",
        CONTENT_LENGTH=length,
    )

    assert response.status_code == 400
    assert response.json()["error"]["message"].startswith(f"Content-Length: {length!r} is no")
    assert not Thread.objects.exists()


def test_a_query_parameter_sent_twice_to_a_post_is_refused(alice):
    response = alice.client.post(
        "/api/v1/search?format=json&format=json", {"query": "x"}, format="json"
    )

    assert response.status_code == 400
    assert response.json()["error"]["details"] == {"format": ["Sent 2 times; send it once."]}


@pytest.mark.parametrize(
    "content_type, said",
    [
        ("", "No Content-Type was sent"),
        ("application/x-www-form-urlencoded", "Content-Type 'application/x-www-form-urlencoded'"),
        ("text/plain; charset=utf-8", "Content-Type 'text/plain' is not taken here"),
    ],
)
def test_a_body_of_another_type_is_a_415_saying_what_to_send(alice, content_type, said):
    response = alice.client.generic(
        "POST", "/api/v1/threads", b'{"title": "x"}', content_type=content_type
    )

    assert response.status_code == 415
    message = response.json()["error"]["message"]
    assert message.startswith(said)
    assert message.endswith("; send the body as application/json.")
    assert not Thread.objects.exists()


def test_an_upload_endpoint_names_both_types_it_takes(alice):
    thread = alice.new_thread()
    run = alice.post(f"/api/v1/threads/{thread['id']}/runs", {}).json()

    response = alice.client.post(
        f"/api/v1/runs/{run['id']}/artifacts", b"x", content_type="text/csv"
    )

    assert response.status_code == 415
    assert response.json()["error"]["message"] == (
        "Content-Type 'text/csv' is not taken here; "
        "send the body as multipart/form-data or application/json."
    )
