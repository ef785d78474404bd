"""Ask a chat model for text or a JSON object, through any OpenAI-compatible endpoint.

Offline fallback interface: chat_model_for(model) returns None when no endpoint is configured
(neither OPENAI_API_KEY nor OPENAI_BASE_URL) or the model name is empty. Every caller must then
do its work without a model, deterministically (for example a rule-based summary), so the server
runs fully offline. When it returns a ChatModel, calls raise LLMError on failure (LLMOutputError
when the answer is not the structured output asked for); callers may fall back the same way.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

import openai

from apps.core.metrics import llm_call_record
from apps.providers.answers import excerpt, json_answer
from apps.providers.api_errors import describe_api_error
from apps.providers.endpoint import endpoint_configured, endpoint_options
from apps.providers.errors import LLMError, LLMOutputError, LLMRefusal, LLMTruncated

__all__ = [
    "ChatModel",
    "LLMError",
    "LLMOutputError",
    "LLMRefusal",
    "LLMTruncated",
    "OpenAIChatModel",
    "chat_model_for",
    "json_object_parse",
]


class ChatModel(Protocol):
    model: str

    def complete(self, messages: list[dict], *, max_tokens: int | None = None) -> str:
        """Return the model's answer to the messages."""

    def complete_json(self, messages: list[dict], *, required_keys: tuple[str, ...] = ()) -> dict:
        """Return the model's answer as a JSON object holding every required key."""


def json_object_parse(text: str, *, model: str, required_keys: tuple[str, ...] = ()) -> dict:
    """Parse a model's answer as a JSON object (see answers.json_answer), with required keys."""
    return json_answer(text, model=model, required_keys=required_keys)


class OpenAIChatModel:
    """Chat with an OpenAI-compatible /chat/completions endpoint at temperature 0."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str,
        base_url: str,
        timeout: float,
        max_retries: int,
    ):
        self.model = model
        self.base_url = base_url
        self.timeout = timeout
        self._json_mode = True
        # The client retries transient failures itself (Retry-After honoured, jittered backoff).
        self._client = openai.OpenAI(
            api_key=api_key, base_url=base_url, timeout=timeout, max_retries=max_retries
        )

    def complete(self, messages: list[dict], *, max_tokens: int | None = None) -> str:
        """Return the model's answer to the messages."""
        extra = {} if max_tokens is None else {"max_tokens": max_tokens}
        with self._counted():
            try:
                return self._create(messages, **extra)
            except openai.APIError as error:
                raise self._error(error) from error

    def complete_json(self, messages: list[dict], *, required_keys: tuple[str, ...] = ()) -> dict:
        """Return the model's answer as a JSON object holding every required key.

        The messages should ask for JSON: OpenAI refuses JSON mode otherwise.
        """
        with self._counted():
            try:
                text = self._create_in_json_mode(messages)
            except openai.APIError as error:
                raise self._error(error) from error
            return json_object_parse(text, model=self.model, required_keys=required_keys)

    @contextmanager
    def _counted(self) -> Iterator[None]:
        """Count the call for /metrics, as failed when it raises."""
        try:
            yield
        except Exception:
            llm_call_record(model=self.model, failed=True)
            raise
        llm_call_record(model=self.model, failed=False)

    def _create_in_json_mode(self, messages: list[dict]) -> str:
        if not self._json_mode:
            return self._create(messages)
        try:
            return self._create(messages, response_format={"type": "json_object"})
        except openai.BadRequestError:
            # Many local servers do not know response_format: ask once more without it and
            # rely on the prompt and the parser; once that works, stop asking for it.
            text = self._create(messages)
            self._json_mode = False
            return text

    def _create(self, messages: list[dict], **extra) -> str:
        """Return the answer's text; raise when it is cut, refused or empty.

        1. No choice, or a choice with no text: LLMOutputError (a refusal: LLMRefusal).
        2. finish_reason "length": the answer stopped at the token limit, so a JSON answer is
           cut mid-way and a text one lacks its end: LLMTruncated, never used as it is.
        3. finish_reason "content_filter", or the refusal field set: LLMRefusal.
        4. Only white space: LLMOutputError.
        """
        response = self._client.chat.completions.create(
            model=self.model, messages=messages, temperature=0, **extra
        )
        if not response.choices:
            raise LLMOutputError(f"model {self.model} answered no choices")
        choice = response.choices[0]
        text = choice.message.content
        refusal = getattr(choice.message, "refusal", None)
        if refusal or choice.finish_reason == "content_filter":
            said = excerpt(refusal or text or "")
            raise LLMRefusal(f"model {self.model} refused ({choice.finish_reason}): {said!r}")
        if choice.finish_reason == "length":
            raise LLMTruncated(
                f"model {self.model} was cut at its token limit (finish_reason length) after "
                f"{len(text or '')} characters: {excerpt(text or '')!r}"
            )
        if text is None or not text.strip():
            raise LLMOutputError(
                f"model {self.model} answered no text (finish_reason {choice.finish_reason})"
            )
        return text

    def _error(self, error: openai.APIError) -> LLMError:
        return LLMError(
            describe_api_error(
                error, model=self.model, base_url=self.base_url, timeout=self.timeout
            )
        )


def chat_model_for(model: str) -> ChatModel | None:
    """Return the chat model for a configured name, or None to use the offline fallback."""
    if not model or not endpoint_configured():
        return None
    return OpenAIChatModel(model, **endpoint_options())
