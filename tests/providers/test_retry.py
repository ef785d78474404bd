import openai
import pytest

from apps.providers.retry import call_with_retry


@pytest.fixture
def client(fake_openai):
    return openai.OpenAI(api_key="sk-test", base_url=fake_openai.base_url, max_retries=0)


def _embed(client):
    return lambda: client.embeddings.create(model="m", input="hi", encoding_format="float")


def test_it_doubles_the_delay_after_each_failure(fake_openai, client):
    fake_openai.fail_next(3, status=500)
    sleeps = []

    call_with_retry(_embed(client), max_retries=3, base_delay=0.2, sleep=sleeps.append)

    assert sleeps == [0.2, 0.4, 0.8]


def test_it_raises_the_last_error_when_retries_run_out(fake_openai, client):
    fake_openai.fail_next(3, status=429)
    sleeps = []

    with pytest.raises(openai.RateLimitError):
        call_with_retry(_embed(client), max_retries=2, base_delay=0.2, sleep=sleeps.append)

    assert sleeps == [0.2, 0.4]


def test_it_makes_one_attempt_with_no_retries(fake_openai, client):
    fake_openai.fail_next(1, status=500)

    with pytest.raises(openai.InternalServerError):
        call_with_retry(_embed(client), max_retries=0)

    assert len(fake_openai.requests) == 1


def test_it_raises_a_client_error_at_once(fake_openai, client):
    fake_openai.fail_next(1, status=400)
    sleeps = []

    with pytest.raises(openai.BadRequestError):
        call_with_retry(_embed(client), max_retries=3, sleep=sleeps.append)

    assert sleeps == []
