import json
import urllib.error
import urllib.request

import numpy as np
import openai
import pytest

from apps.providers.embeddings import HashEmbedder
from apps.providers.fake_openai import FAILURE_RETRY_AFTER, FakeOpenAIServer


def _post(server, path, body) -> tuple[int, dict]:
    request = urllib.request.Request(
        server.base_url + path,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def test_it_answers_embeddings_in_openais_shape(fake_openai):
    status, body = _post(fake_openai, "/embeddings", {"model": "m", "input": ["a b", "c"]})

    assert status == 200
    assert body["object"] == "list"
    assert body["model"] == "m"
    assert body["usage"] == {"prompt_tokens": 3, "total_tokens": 3}
    assert [(item["object"], item["index"]) for item in body["data"]] == [
        ("embedding", 0),
        ("embedding", 1),
    ]


def test_it_embeds_with_the_hash_embedder_at_1536_dimensions_by_default(fake_openai):
    _, body = _post(fake_openai, "/embeddings", {"model": "m", "input": "hello world"})

    vector = body["data"][0]["embedding"]
    assert len(vector) == 1536
    assert np.allclose(vector, HashEmbedder(1536).embed(["hello world"])[0])


def test_it_serves_base64_vectors_to_the_openai_clients_default(fake_openai):
    client = openai.OpenAI(api_key="sk-test", base_url=fake_openai.base_url, max_retries=0)

    response = client.embeddings.create(model="m", input=["hello"], dimensions=32)

    assert fake_openai.bodies("/v1/embeddings")[0]["encoding_format"] == "base64"
    assert np.allclose(response.data[0].embedding, HashEmbedder(32).embed(["hello"])[0])


@pytest.mark.parametrize(
    "body, says",
    [
        ({"model": "m", "input": ""}, "cannot be empty"),
        ({"model": "m", "input": [1, 2]}, "only text input"),
        ({"model": "m", "input": "x", "dimensions": 0}, "positive integer"),
        ({"model": "text-embedding-ada-002", "input": "x", "dimensions": 8}, "dimensions"),
    ],
)
def test_it_refuses_embedding_requests_that_openai_refuses(fake_openai, body, says):
    status, answer = _post(fake_openai, "/embeddings", body)

    assert status == 400
    assert says in answer["error"]["message"]


def test_it_answers_chat_completions_in_openais_shape(fake_openai):
    fake_openai.script("Hi!")

    status, body = _post(
        fake_openai,
        "/chat/completions",
        {"model": "m", "messages": [{"role": "user", "content": "Hey"}]},
    )

    assert status == 200
    assert body["object"] == "chat.completion"
    assert body["model"] == "m"
    assert body["id"].startswith("chatcmpl-")
    assert isinstance(body["created"], int)
    assert body["choices"][0]["message"] == {"role": "assistant", "content": "Hi!"}
    assert body["choices"][0]["finish_reason"] == "stop"
    usage = body["usage"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]


def test_it_answers_scripted_answers_in_order_then_echoes(fake_openai):
    fake_openai.script("one", "two")
    client = openai.OpenAI(api_key="sk-test", base_url=fake_openai.base_url, max_retries=0)

    def ask(text):
        messages = [{"role": "user", "content": "earlier"}, {"role": "user", "content": text}]
        response = client.chat.completions.create(model="m", messages=messages)
        return response.choices[0].message.content

    assert [ask("a"), ask("b"), ask("c" * 500)] == ["one", "two", "c" * 200]


def test_it_echoes_as_json_in_json_mode(fake_openai):
    _, body = _post(
        fake_openai,
        "/chat/completions",
        {
            "model": "m",
            "messages": [{"role": "user", "content": [{"type": "text", "text": "Hey"}]}],
            "response_format": {"type": "json_object"},
        },
    )

    assert json.loads(body["choices"][0]["message"]["content"]) == {"answer": "Hey"}


def test_it_fails_the_next_requests_with_an_openai_style_error(fake_openai):
    fake_openai.fail_next(2, status=503)
    request = {"model": "m", "input": "x"}

    answers = [_post(fake_openai, "/embeddings", request) for _ in range(3)]

    assert [status for status, _ in answers] == [503, 503, 200]
    error = answers[0][1]["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["type"] == "server_error"


@pytest.mark.parametrize(
    "retry_after, header",
    [(FAILURE_RETRY_AFTER, "0.001"), (0.25, "0.25"), (2, "2"), (None, None)],
)
def test_a_failure_says_when_to_retry(fake_openai, retry_after, header):
    fake_openai.fail_next(1, status=429, retry_after=retry_after)
    request = urllib.request.Request(fake_openai.base_url + "/embeddings", data=b"{}")

    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=5)

    assert caught.value.code == 429
    assert caught.value.headers.get("Retry-After") == header


def test_it_records_each_request_with_its_body(fake_openai):
    _post(fake_openai, "/embeddings", {"model": "m", "input": "x"})
    _post(fake_openai, "/chat/completions", {"model": "m", "messages": [{"role": "user"}]})

    assert fake_openai.requests == [
        ("/v1/embeddings", {"model": "m", "input": "x"}),
        ("/v1/chat/completions", {"model": "m", "messages": [{"role": "user"}]}),
    ]


def test_it_answers_404_for_other_paths(fake_openai):
    status, body = _post(fake_openai, "/responses", {"model": "m"})

    assert status == 404
    assert body["error"]["type"] == "invalid_request_error"


def test_it_keeps_serving_after_a_client_gave_up_waiting(fake_openai):
    client = openai.OpenAI(
        api_key="sk-test", base_url=fake_openai.base_url, max_retries=0, timeout=0.1
    )
    fake_openai.delay(0.3)
    with pytest.raises(openai.APITimeoutError):
        client.embeddings.create(model="m", input="x")

    fake_openai.delay(0)

    assert _post(fake_openai, "/embeddings", {"model": "m", "input": "x"})[0] == 200


def test_it_frees_its_port_when_the_block_ends():
    with FakeOpenAIServer() as server:
        base_url = server.base_url
        assert server.base_url.startswith("http://127.0.0.1:")

    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(base_url + "/embeddings", data=b"{}", timeout=1)
