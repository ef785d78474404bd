import time

import pytest
from django.test import override_settings

from apps.providers.llm import LLMError, LLMOutputError, OpenAIChatModel, chat_model_for

ASK = [{"role": "system", "content": "Answer in JSON."}, {"role": "user", "content": "Who?"}]


def _chat(server, **overrides) -> OpenAIChatModel:
    options = {
        "api_key": "sk-test",
        "base_url": server.base_url,
        "timeout": 5.0,
        "max_retries": 2,
    }
    return OpenAIChatModel("gpt-test", **{**options, **overrides})


def test_it_returns_the_answer_at_temperature_zero(fake_openai):
    fake_openai.script("Hello, Alice.")

    answer = _chat(fake_openai).complete(ASK)

    body = fake_openai.bodies("/v1/chat/completions")[0]
    assert answer == "Hello, Alice."
    assert body["model"] == "gpt-test"
    assert body["messages"] == ASK
    assert body["temperature"] == 0


def test_it_sends_max_tokens_only_when_given(fake_openai):
    chat = _chat(fake_openai)

    chat.complete(ASK)
    chat.complete(ASK, max_tokens=50)

    first, second = fake_openai.bodies("/v1/chat/completions")
    assert "max_tokens" not in first
    assert second["max_tokens"] == 50


def test_it_asks_for_json_mode(fake_openai):
    fake_openai.script('{"name": "Alice"}')

    _chat(fake_openai).complete_json(ASK)

    body = fake_openai.bodies("/v1/chat/completions")[0]
    assert body["response_format"] == {"type": "json_object"}


@pytest.mark.parametrize(
    "answer",
    [
        '{"name": "Alice"}',
        '  {"name": "Alice"}\n',
        '```json\n{"name": "Alice"}\n```',
        '```JSON\n{"name": "Alice"}```',
        '```\n{"name": "Alice"}\n```',
        'Here it is:\n```json\n{"name": "Alice"}\n```\nAnything else?',
        '{"name": "Alice", "note": "wrap code in ``` fences"}',
    ],
)
def test_it_accepts_a_bare_or_fenced_json_object(fake_openai, answer):
    fake_openai.script(answer)

    assert _chat(fake_openai).complete_json(ASK, required_keys=("name",))["name"] == "Alice"


@pytest.mark.parametrize(
    "answer, says",
    [
        ("Alice, I think.", "did not answer JSON"),
        ('```json\n{"name": \n```', "did not answer JSON"),
        ('["Alice"]', "answered a JSON array, not an object"),
        ('"Alice"', "answered a JSON string, not an object"),
        ("null", "answered a JSON null, not an object"),
        ('{"who": "Alice"}', "left out name"),
    ],
)
def test_it_rejects_answers_that_are_not_the_object_asked_for(fake_openai, answer, says):
    fake_openai.script(answer)

    with pytest.raises(LLMOutputError, match=says) as caught:
        _chat(fake_openai).complete_json(ASK, required_keys=("name",))

    assert "model gpt-test" in str(caught.value)
    assert answer.split()[0] in str(caught.value)


def test_it_quotes_only_an_excerpt_of_a_long_bad_answer(fake_openai):
    fake_openai.script("no " * 1000)

    with pytest.raises(LLMOutputError) as caught:
        _chat(fake_openai).complete_json(ASK)

    assert len(str(caught.value)) < 300


def test_it_asks_again_without_json_mode_when_the_server_refuses_it(fake_openai):
    fake_openai.fail_next(1, status=400, message="Unknown parameter: response_format")
    fake_openai.script('{"name": "Alice"}', '{"name": "Bob"}')
    chat = _chat(fake_openai)

    assert chat.complete_json(ASK) == {"name": "Alice"}
    assert chat.complete_json(ASK) == {"name": "Bob"}

    bodies = fake_openai.bodies("/v1/chat/completions")
    assert ["response_format" in body for body in bodies] == [True, False, False]


def test_it_asks_without_json_mode_only_once(fake_openai):
    fake_openai.fail_next(2, status=400, message="Bad request")

    with pytest.raises(LLMError, match="answered 400: Bad request"):
        _chat(fake_openai).complete_json(ASK)

    assert len(fake_openai.requests) == 2


def test_it_retries_server_errors_then_succeeds(fake_openai):
    fake_openai.fail_next(2, status=502)
    fake_openai.script("ok")

    assert _chat(fake_openai, max_retries=2).complete(ASK) == "ok"
    assert len(fake_openai.requests) == 3


def test_it_gives_up_after_max_retries_with_an_llm_error(fake_openai):
    fake_openai.fail_next(10, status=500, message="Model crashed")

    with pytest.raises(LLMError, match="answered 500: Model crashed") as caught:
        _chat(fake_openai, max_retries=1).complete_json(ASK)

    assert not isinstance(caught.value, LLMOutputError)
    assert len(fake_openai.requests) == 2


def test_it_does_not_retry_a_rejected_key(fake_openai):
    fake_openai.fail_next(1, status=401, message="Incorrect API key provided")

    with pytest.raises(LLMError, match="Incorrect API key provided; check OPENAI_API_KEY"):
        _chat(fake_openai).complete(ASK)

    assert len(fake_openai.requests) == 1


def test_it_gives_up_when_the_server_is_slower_than_the_timeout(fake_openai):
    fake_openai.delay(2.0)
    started = time.perf_counter()

    with pytest.raises(LLMError, match="timed out after 0.2s"):
        _chat(fake_openai, timeout=0.2, max_retries=0).complete(ASK)

    assert time.perf_counter() - started < 1.0


def test_it_hands_the_request_to_a_scripted_callable(fake_openai):
    fake_openai.script(lambda body: body["messages"][-1]["content"].upper())

    assert _chat(fake_openai).complete(ASK) == "WHO?"


@pytest.mark.parametrize(
    "model, key, base_url",
    [
        ("gpt-test", "", ""),
        ("", "sk-test", ""),
        ("", "", "http://127.0.0.1:1/v1"),
    ],
)
def test_it_leaves_callers_to_their_offline_fallback(model, key, base_url):
    with override_settings(OPENAI_API_KEY=key, OPENAI_BASE_URL=base_url):
        assert chat_model_for(model) is None


def test_it_talks_to_a_local_endpoint_without_a_key(fake_openai, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    fake_openai.script("hi")

    with override_settings(OPENAI_API_KEY="", OPENAI_BASE_URL=fake_openai.base_url):
        chat = chat_model_for("llama3")
        answer = chat.complete(ASK)

    assert chat.model == "llama3"
    assert answer == "hi"
