"""Real model answers, scripted on the loopback server: what is parsed, what is refused, and why.

Every test goes through OpenAIChatModel and the real openai client over HTTP.
"""

import json
import time

import pytest
from django.test import override_settings

from apps.providers.answers import answer_problem, errors_dropped, identifiers_dropped
from apps.providers.llm import (
    LLMError,
    LLMOutputError,
    LLMRefusal,
    LLMTruncated,
    OpenAIChatModel,
    chat_model_for,
)

ASK = [{"role": "system", "content": "Answer in JSON."}, {"role": "user", "content": "Who?"}]


def _chat(server, **overrides) -> OpenAIChatModel:
    options = {"api_key": "sk-test", "base_url": server.base_url, "timeout": 5.0}
    return OpenAIChatModel("gpt-test", **{**options, "max_retries": 0, **overrides})


@pytest.mark.parametrize(
    "answer",
    [
        '```json\n{"who": "Dana"}\n```',
        'Here is the JSON you asked for:\n```json\n{"who": "Dana"}\n```\nLet me know!',
        'Sure! {"who": "Dana"} Hope this helps.',
        'The answer is:\n\n{"who": "Dana"}\n\n(as requested)',
        '```\n{"who": "Dana"}\n```',
        'Note: {not json} then {"who": "Dana"}',
    ],
)
def test_json_in_fences_or_with_prose_around_it_is_parsed(fake_openai, answer):
    fake_openai.script(answer)

    assert _chat(fake_openai).complete_json(ASK, required_keys=("who",)) == {"who": "Dana"}


def test_an_answer_cut_at_the_token_limit_is_never_used(fake_openai):
    fake_openai.script({"content": '{"who": "Dana", "what": "the', "finish_reason": "length"})

    with pytest.raises(LLMTruncated, match="cut at its token limit"):
        _chat(fake_openai).complete_json(ASK)


def test_a_text_answer_cut_at_the_token_limit_is_never_used_either(fake_openai):
    fake_openai.script({"content": "Dana asked for the refund of", "finish_reason": "length"})

    with pytest.raises(LLMTruncated):
        _chat(fake_openai).complete(ASK)


@pytest.mark.parametrize("content", ["", "   \n ", None])
def test_an_empty_answer_is_an_output_error(fake_openai, content):
    fake_openai.script({"content": content})

    with pytest.raises(LLMOutputError, match="answered no text"):
        _chat(fake_openai).complete_json(ASK)


@pytest.mark.parametrize(
    "answer",
    [
        {"content": None, "refusal": "I'm sorry, I cannot help with that request."},
        {"content": "", "finish_reason": "content_filter"},
        "I'm sorry, but I can't help with summarising this conversation.",
        "I cannot assist with that.",
        "As an AI language model, I am unable to do this.",
    ],
)
def test_a_refusal_is_told_apart_from_an_answer_that_is_not_json(fake_openai, answer):
    fake_openai.script(answer)

    with pytest.raises(LLMRefusal, match="refused"):
        _chat(fake_openai).complete_json(ASK)


def test_prose_that_is_no_refusal_is_an_output_error_not_a_refusal(fake_openai):
    fake_openai.script("Dana wants a refund.")

    with pytest.raises(LLMOutputError, match="did not answer JSON") as raised:
        _chat(fake_openai).complete_json(ASK)
    assert not isinstance(raised.value, LLMRefusal)


def test_429_with_retry_after_is_waited_then_answered(fake_openai):
    fake_openai.fail_next(2, status=429, message="Rate limit reached", retry_after=0.3)
    fake_openai.script(json.dumps({"who": "Dana"}))
    started = time.perf_counter()

    answer = _chat(fake_openai, max_retries=2).complete_json(ASK)

    assert answer == {"who": "Dana"}
    assert 0.6 <= time.perf_counter() - started < 3.0


def test_a_retry_after_beyond_two_minutes_fails_at_once_instead_of_holding_the_worker(
    fake_openai,
):
    # The client honours Retry-After up to two minutes and does not retry beyond: a provider
    # asking for an hour gets an LLMError now, and the caller's fallback takes over.
    fake_openai.fail_next(2, status=429, message="Rate limit reached", retry_after=3600)
    started = time.perf_counter()

    with pytest.raises(LLMError, match="answered 429: Rate limit reached"):
        _chat(fake_openai, max_retries=3).complete(ASK)

    assert time.perf_counter() - started < 1.0
    assert len(fake_openai.requests) == 1


def test_the_total_time_of_a_failing_call_is_bounded_by_timeout_and_retries(fake_openai):
    fake_openai.delay(2.0)
    started = time.perf_counter()

    with pytest.raises(LLMError, match="timed out after 0.3s"):
        _chat(fake_openai, timeout=0.3, max_retries=1).complete(ASK)

    # Two attempts of 0.3 s and one backoff of at most a second.
    assert time.perf_counter() - started < 2.5


def test_the_settings_give_every_chat_model_a_timeout_and_bounded_retries(fake_openai):
    with override_settings(
        OPENAI_BASE_URL=fake_openai.base_url, OPENAI_TIMEOUT=7.5, OPENAI_MAX_RETRIES=2
    ):
        chat = chat_model_for("gpt-test")

    assert chat.timeout == 7.5
    assert chat._client.timeout == 7.5 and chat._client.max_retries == 2


@pytest.mark.parametrize("status", [500, 502, 503])
def test_a_5xx_that_outlasts_the_retries_is_an_llm_error_naming_the_status(fake_openai, status):
    fake_openai.fail_next(3, status=status)

    with pytest.raises(LLMError, match=f"answered {status}"):
        _chat(fake_openai, max_retries=2).complete(ASK)

    assert len(fake_openai.requests) == 3


# Checking an answer against its source.

SOURCE = (
    "#4 user: Refund order O-7781 of 489.00 EUR via https://pay.example.com/v2.1/refunds\n"
    "#5 tool refund: Error: card of pay-1042 expired\n"
    "#6 assistant: I will retry with the backup card tomorrow, ticket T-88."
)


def test_an_answer_that_keeps_every_identifier_and_error_passes():
    answer = (
        "Refund O-7781 (489.00 EUR, https://pay.example.com/v2.1/refunds) failed: pay-1042 "
        "card expired; retry tomorrow, T-88."
    )

    assert answer_problem(SOURCE, answer) == ""


def test_an_answer_longer_than_its_source_is_refused():
    assert "longer than its source" in answer_problem(SOURCE, SOURCE + " And more." * 10)


def test_an_answer_that_drops_identifiers_names_them():
    answer = "Refund of O-7781 failed: pay-1042 card expired; retry tomorrow, T-88."

    assert identifiers_dropped(SOURCE, answer) == [
        "489.00",
        "https://pay.example.com/v2.1/refunds",
    ]
    assert "it dropped 489.00, https://pay.example.com/v2.1/refunds" in answer_problem(
        SOURCE, answer
    )


def test_an_answer_that_drops_an_error_names_it():
    answer = "Refund O-7781 of 489.00 via https://pay.example.com/v2.1/refunds; T-88 tomorrow."

    assert errors_dropped(SOURCE, answer) == ["#5 tool refund: Error: card of pay-1042 expired"]
    assert "it dropped the error" in answer_problem(SOURCE, answer)


def test_an_empty_answer_is_refused():
    assert answer_problem(SOURCE, "  ") == "the answer is empty"
