"""A fake OpenAI-compatible server on loopback, for tests and offline demos.

It is a real HTTP server in a daemon thread, so the real openai client talks to it unchanged:
  POST /v1/embeddings         vectors from HashEmbedder, of the requested dimensions (1536 unless
                              asked); text-embedding-ada-002 refuses `dimensions`, as OpenAI does
  POST /v1/chat/completions   answers queued with script() (text, tool calls, or a choice as
                              a model may give it: cut at its token limit, refused, empty),
                              else a deterministic echo
Tests inject faults with fail_next() and delay(), and read what arrived from requests.
"""

import base64
import json
import logging
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np

from apps.providers.embeddings import HashEmbedder
from apps.providers.tokens import count_message_tokens, count_tokens

logger = logging.getLogger(__name__)

DEFAULT_EMBEDDING_DIMENSIONS = 1536
_ECHO_CHARS = 200
_NO_DIMENSIONS_MODELS = {"text-embedding-ada-002"}

# A chat answer: its text, or {"tool_calls": [{"id", "name", "arguments"}]} for a model that
# calls tools, or a choice {"content": text or None, "finish_reason": "length" | "stop" |
# "content_filter", "refusal": text} for a model that stops short or declines, or a callable
# taking the request body and returning any of these.
Answer = str | dict | Callable[[dict], str | dict]
# Retry-After on scripted failures, in seconds: see fail_next().
FAILURE_RETRY_AFTER = 0.001


@dataclass(frozen=True)
class _Failure:
    status: int
    message: str | None
    retry_after: float | None


def _error(status: int, message: str, *, param: str | None = None) -> tuple[int, dict]:
    kind = "server_error" if status >= 500 else "invalid_request_error"
    return status, {"error": {"message": message, "type": kind, "param": param, "code": None}}


def _text(content) -> str:
    """Return the text of a message's content, a string or a list of content parts."""
    if isinstance(content, list):
        return " ".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else ""


class FakeOpenAIServer:
    """Serve a scriptable subset of the OpenAI API on 127.0.0.1; use it as a context manager."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0):
        self._lock = threading.Lock()
        self._requests: list[tuple[str, dict | None]] = []
        self._answers: deque[Answer] = deque()
        self._failures: deque[_Failure] = deque()
        self._delay = 0.0
        self._fixed_dimensions: int | None = None
        self._completions = 0
        self._stopping = threading.Event()
        self._httpd = _HTTPServer((host, port), _Handler)
        self._httpd.fake = self
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def requests(self) -> list[tuple[str, dict | None]]:
        """Return a snapshot of the (path, JSON body) pairs received so far."""
        with self._lock:
            return list(self._requests)

    def bodies(self, path: str) -> list[dict | None]:
        """Return the bodies received at one path, such as "/v1/embeddings"."""
        return [body for seen, body in self.requests if seen == path]

    def start(self) -> "FakeOpenAIServer":
        """Serve in a daemon thread until stop()."""
        # A short poll interval makes stop() quick; the default would add half a second.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.05,), name="fake-openai", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port; requests still sleeping in delay() end at once."""
        self._stopping.set()
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join()
        self._httpd.server_close()

    def __enter__(self) -> "FakeOpenAIServer":
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def script(self, *answers: Answer) -> None:
        """Queue chat answers: text, tool calls, or callables taking the request body."""
        with self._lock:
            self._answers.extend(answers)

    def fail_next(
        self,
        count: int,
        status: int = 500,
        message: str | None = None,
        *,
        retry_after: float | None = FAILURE_RETRY_AFTER,
    ) -> None:
        """Answer the next count requests, whatever their path, with this error status.

        Each answer carries Retry-After: retry_after seconds (None sends no header). The openai
        client waits that long before its next attempt; without the header it backs off for half
        a second or more, and it does not honour 0, hence a default of one millisecond.
        """
        with self._lock:
            self._failures.extend([_Failure(status, message, retry_after)] * count)

    def delay(self, seconds: float) -> None:
        """Wait this long before answering every request from now on (0 to stop)."""
        with self._lock:
            self._delay = seconds

    def fix_dimensions(self, dimensions: int | None) -> None:
        """Answer embeddings of this size whatever was asked, like a local fixed-size model."""
        with self._lock:
            self._fixed_dimensions = dimensions

    def answer(self, method: str, path: str, raw: bytes) -> tuple[int, dict, dict]:
        """Return the status, JSON body and extra headers for one request (handler threads)."""
        path = path.split("?", 1)[0]
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        with self._lock:
            self._requests.append((path, body))
            delay = self._delay
            failure = self._failures.popleft() if self._failures else None
        if delay:
            self._stopping.wait(delay)
        if failure is not None:
            status = failure.status
            message = failure.message or f"The fake server failed this request ({status})."
            headers = {} if failure.retry_after is None else {"Retry-After": failure.retry_after}
            return (*_error(status, message), headers)
        if method != "POST" or path not in ("/v1/embeddings", "/v1/chat/completions"):
            return (*_error(404, f"Unknown request URL: {method} {path}."), {})
        if not isinstance(body, dict):
            return (*_error(400, "The request body must be a JSON object."), {})
        if path == "/v1/embeddings":
            return (*self._embeddings(body), {})
        return (*self._chat_completion(body), {})

    def _embeddings(self, body: dict) -> tuple[int, dict]:
        model, texts = body.get("model"), body.get("input")
        if isinstance(texts, str):
            texts = [texts]
        if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
            return _error(400, "This fake accepts only text input.", param="input")
        if "" in texts:
            return _error(400, "'$.input' is invalid: an input cannot be empty.", param="input")
        dimensions = body.get("dimensions")
        if dimensions is not None and model in _NO_DIMENSIONS_MODELS:
            return _error(400, "This model does not support specifying dimensions.")
        if dimensions is not None and (not isinstance(dimensions, int) or dimensions < 1):
            return _error(400, "dimensions must be a positive integer.", param="dimensions")
        size = self._fixed_dimensions or dimensions or DEFAULT_EMBEDDING_DIMENSIONS
        vectors = HashEmbedder(size).embed_array(texts)
        base64_wanted = body.get("encoding_format") == "base64"
        data = [
            {
                "object": "embedding",
                "index": index,
                "embedding": _base64(vector) if base64_wanted else vector.tolist(),
            }
            for index, vector in enumerate(vectors)
        ]
        tokens = sum(count_tokens(text) for text in texts)
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        return 200, {"object": "list", "data": data, "model": model, "usage": usage}

    def _chat_completion(self, body: dict) -> tuple[int, dict]:
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return _error(400, "messages must be a non-empty list.", param="messages")
        with self._lock:
            answer = self._answers.popleft() if self._answers else None
            self._completions += 1
            number = self._completions
        if callable(answer):
            answer = answer(body)
        if answer is None:
            answer = _echo(body)
        prompt = sum(count_message_tokens(_text(m.get("content"))) for m in messages)
        message, finish = {"role": "assistant", "content": answer}, "stop"
        if isinstance(answer, dict) and "tool_calls" in answer:
            message, finish = _tool_calls(answer["tool_calls"]), "tool_calls"
            answer = json.dumps(answer["tool_calls"])
        elif isinstance(answer, dict):
            message = {"role": "assistant", "content": answer.get("content")}
            if answer.get("refusal") is not None:
                message["refusal"] = answer["refusal"]
            finish = answer.get("finish_reason", "stop")
            answer = answer.get("content") or ""
        completion = count_tokens(answer)
        return 200, {
            "id": f"chatcmpl-fake-{number}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model"),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": finish,
                }
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            },
        }


def _tool_calls(calls: list[dict]) -> dict:
    """Return an assistant message that calls these tools, as OpenAI's API shapes it."""
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": call["id"],
                "type": "function",
                "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])},
            }
            for call in calls
        ],
    }


def _base64(vector: np.ndarray) -> str:
    return base64.b64encode(vector.astype("<f4").tobytes()).decode()


def _echo(body: dict) -> str:
    """Return the default answer: the last user message, cut short; as JSON in JSON mode."""
    user = [m for m in body["messages"] if isinstance(m, dict) and m.get("role") == "user"]
    text = _text(user[-1].get("content"))[:_ECHO_CHARS] if user else ""
    if (body.get("response_format") or {}).get("type") == "json_object":
        return json.dumps({"answer": text})
    return text


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    # Do not wait for handlers on close: one may sleep in delay() for a client that gave up.
    block_on_close = False
    fake: FakeOpenAIServer

    def handle_error(self, request, client_address):
        # A client that timed out has closed its socket; writing the late answer fails quietly.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the openai client expects
    server: _HTTPServer

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._respond(raw)

    def do_GET(self):
        self._respond(b"")

    def _respond(self, raw: bytes) -> None:
        try:
            status, payload, headers = self.server.fake.answer(self.command, self.path, raw)
        except Exception as error:  # a scripted callable failed: say so, as a server would
            logger.exception("fake OpenAI server failed on %s", self.path)
            status, payload = _error(500, f"The fake server raised {error!r}.")
            headers = {}
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name, f"{value:g}" if isinstance(value, float) else str(value))
        self.end_headers()
        self.wfile.write(data)
        logger.info("fake OpenAI %s %s → %s", self.command, self.path, status)

    def log_message(self, format, *args):
        pass  # logged above, through logging, instead of raw stderr
