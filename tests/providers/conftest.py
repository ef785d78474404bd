"""The fake OpenAI-compatible server on loopback."""

import pytest

from apps.providers.fake_openai import FakeOpenAIServer


@pytest.fixture
def fake_openai():
    with FakeOpenAIServer() as server:
        yield server
