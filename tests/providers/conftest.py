"""The fake OpenAI-compatible server on loopback, and backoff short enough for tests."""

import pytest

from apps.providers import retry
from apps.providers.fake_openai import FakeOpenAIServer


@pytest.fixture(autouse=True)
def quick_backoff(monkeypatch):
    monkeypatch.setattr(retry, "RETRY_BASE_DELAY", 0.001)


@pytest.fixture
def fake_openai():
    with FakeOpenAIServer() as server:
        yield server
