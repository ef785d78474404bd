import pytest

from apps.providers.tokens import count_message_tokens, count_tokens


@pytest.mark.parametrize(
    "text, tokens",
    [
        ("", 0),
        ("hi", 1),
        ("hello world", 4),
        ("a, b.", 4),
        ("1234567", 3),
        ("internationalisation", 5),
    ],
)
def test_it_counts_tokens(text, tokens):
    assert count_tokens(text) == tokens


def test_it_counts_more_tokens_for_longer_text():
    assert count_tokens("the quick brown fox " * 10) > count_tokens("the quick brown fox")


def test_it_estimates_english_at_about_four_characters_a_token():
    text = "Memory Console stores threads, messages and facts for agents to recall later. " * 5

    assert len(text) / 6 < count_tokens(text) < len(text) / 3


def test_it_adds_framing_and_the_payload_to_a_message():
    assert count_message_tokens("") == 4
    assert count_message_tokens("hi") == 5
    assert count_message_tokens("hi", {"a": 1}) > count_message_tokens("hi")
