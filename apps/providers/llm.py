"""Ask a chat model for text or a JSON object, through any OpenAI-compatible endpoint.

Offline fallback interface: chat_model_for(model) returns None when no endpoint is configured
(neither OPENAI_API_KEY nor OPENAI_BASE_URL) or the model name is empty. Every caller must then
do its work without a model, deterministically (for example a rule-based summary), so the server
runs fully offline. When it returns a ChatModel, calls raise LLMError on failure (LLMOutputError
when the answer is not the structured output asked for); callers may fall back the same way.
"""

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

import openai

from apps.core.metrics import llm_call_record
from apps.providers.api_errors import describe_api_error
from apps.providers.endpoint import endpoint_configured, endpoint_options

_FENCED = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)
_EXCERPT_CHARS = 200
_JSON_TYPES = {
    list: "array",
    str: "string",
    int: "number",
    float: "number",
    bool: "boolean",
    type(None): "null",
}


class LLMError(Exception):
    """A chat model call failed; the message says what to fix."""


class LLMOutputError(LLMError):
    """The model answered, but not with the structured output asked for."""


class ChatModel(Protocol):
    model: str

    def complete(self, messages: list[dict], *, max_tokens: int | None = None) -> str:
        """Return the model's answer to the messages."""

    def complete_json(self, messages: list[dict], *, required_keys: tuple[str, ...] = ()) -> dict:
        """Return the model's answer as a JSON object holding every required key."""


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _EXCERPT_CHARS else flat[:_EXCERPT_CHARS] + "…"


def _json_load(text: str):
    """Return the JSON value of text, else of its first ``` fence; raise JSONDecodeError."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        fenced = _FENCED.search(text)
        if fenced is None:
            raise
        return json.loads(fenced.group(1))


def json_object_parse(text: str, *, model: str, required_keys: tuple[str, ...] = ()) -> dict:
    """Parse a model's answer as a JSON object, bare or in a ```json fence, with required keys."""
    try:
        value = _json_load(text)
    except json.JSONDecodeError:
        raise LLMOutputError(f"model {model} did not answer JSON: {_excerpt(text)!r}") from None
    if not isinstance(value, dict):
        kind = _JSON_TYPES.get(type(value), type(value).__name__)
        raise LLMOutputError(
            f"model {model} answered a JSON {kind}, not an object: {_excerpt(text)!r}"
        )
    missing = [key for key in required_keys if key not in value]
    if missing:
        raise LLMOutputError(
            f"model {model} left out {', '.join(missing)} from its answer: {_excerpt(text)!r}"
        )
    return value


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
        response = self._client.chat.completions.create(
            model=self.model, messages=messages, temperature=0, **extra
        )
        if not response.choices or response.choices[0].message.content is None:
            reason = response.choices[0].finish_reason if response.choices else "no choices"
            raise LLMOutputError(f"model {self.model} answered no text ({reason})")
        return response.choices[0].message.content

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
