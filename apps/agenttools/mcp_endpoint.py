"""The MCP endpoint at /mcp: the tool registry served by the official MCP SDK, inside Django.

How it is served, and why. The SDK's Streamable HTTP transport is an ASGI app, while this
project serves Django over WSGI everywhere: gunicorn's threaded workers (`manage.py serve`),
`runserver`, and the test live server (which builds its own WSGIHandler, so neither an ASGI
entry nor a WSGI wrapper around memory_console.wsgi would reach it). Routing /mcp to the SDK
from an ASGI entry would have meant moving production to an ASGI server for one endpoint and
would still have left runserver and the live server without it. Instead /mcp is a plain Django
view: the SDK runs in its stateless, JSON-response mode (every POST is a whole exchange and
gets one JSON answer; no session, no stream held open), so the view hands the request to the
SDK's session manager as one ASGI call, on an event loop in the request's thread
(mcp_server.serve says why there), and returns what it sent.
All protocol handling stays in the SDK; the view only moves bytes and checks the API key,
and it works unchanged under gunicorn, runserver, the live server and an ASGI server.

What stateless mode gives up: GET (a standing server-to-client stream) answers 405, and the
server cannot ask the client anything mid-call. The tools need neither: each answers at once.
"""

import json
from types import SimpleNamespace

from django.http import HttpResponse, JsonResponse
from django.http.request import split_domain_port
from django.views.decorators.csrf import csrf_exempt
from rest_framework.exceptions import Throttled

from apps.core.errors import error_body
from apps.core.text import RepeatedKey, object_once
from apps.core.throttling import ApiKeyRateThrottle
from apps.tenancy.selectors import KeyRejected, api_key_authenticate


def _scope(request) -> dict:
    # get_host() has passed ALLOWED_HOSTS, so it parses; an IPv6 literal keeps its colons
    # inside brackets ("[::1]:8000"), which ASGI's server tuple gives without them.
    host, port = split_domain_port(request.get_host())
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": request.method,
        "scheme": request.scheme,
        "path": request.path,
        "raw_path": request.path.encode(),
        "root_path": "",
        "query_string": request.META.get("QUERY_STRING", "").encode("latin-1"),
        "headers": [
            (name.lower().encode("latin-1"), value.encode("latin-1"))
            for name, value in request.headers.items()
        ],
        "server": (host.strip("[]"), int(port or (443 if request.is_secure() else 80))),
        "client": (request.META.get("REMOTE_ADDR", ""), 0),
    }


def _refuse(message: str) -> JsonResponse:
    response = JsonResponse(error_body("not_authenticated", message), status=401)
    response["WWW-Authenticate"] = 'Bearer realm="mcp"'
    return response


# JSON-RPC leaves -32000 to -32099 to the server; this one says "too many requests".
RATE_LIMITED = -32029


def _throttled(api_key) -> HttpResponse | None:
    """Count the request against the key's API_RATE_LIMIT, shared with the REST API.

    DRF's own throttle class and cache count it, as for a REST view (the class reads the key
    from request.auth, all it is given here). Past the rate: HTTP 429 with Retry-After, its
    body a JSON-RPC error, which the SDK's client hands to the caller as the error of the call
    (with another body it reports only "Server returned an error response").
    """
    throttle = ApiKeyRateThrottle()
    if throttle.allow_request(SimpleNamespace(auth=api_key), None):
        return None
    refused = Throttled(throttle.wait())
    response = _rpc_error(
        RATE_LIMITED,
        f"{refused.detail} (API_RATE_LIMIT of this API key)",
        status=429,
        data={"retry_after": refused.wait},
    )
    response["Retry-After"] = str(refused.wait)
    return response


def _rpc_error(
    code: int, message: str, *, status: int, data=None, request_id: str | int | None = None
) -> HttpResponse:
    """A JSON-RPC error answered by this view itself, before the SDK, under the request's id
    when it has a valid one (JSON-RPC: null only when the id could not be told)."""
    from mcp_types import ErrorData, JSONRPCError

    error = ErrorData(code=code, message=message, data=data)
    body = JSONRPCError(jsonrpc="2.0", id=request_id, error=error).model_dump_json(by_alias=True)
    return HttpResponse(body, status=status, content_type="application/json")


def request_id(body: bytes) -> str | int | None:
    """The message's id, if the body is one JSON object with one valid id (else None). Read
    only to answer an error: a key repeated elsewhere in the message leaves its id readable."""
    try:
        pairs = json.loads(body, object_pairs_hook=list)
    except (ValueError, RecursionError):
        return None
    if not isinstance(pairs, list) or not all(isinstance(p, tuple) for p in pairs):
        return None  # an array of messages, or no object
    ids = [value for key, value in pairs if key == "id"]
    found = ids[0] if len(ids) == 1 else None
    return found if isinstance(found, str | int) and not isinstance(found, bool) else None


# JSON-RPC's code for a message that is JSON but no valid request.
INVALID_REQUEST = -32600
# What a JSON-RPC 2.0 message may hold (a request or notification, or a client's response).
_ENVELOPE_KEYS = {"jsonrpc", "id", "method", "params", "result", "error"}


def protocol_version_problem(request) -> str | None:
    """Say what is wrong with the request's MCP-Protocol-Version header, or return None.

    The SDK sends a header it does not know to its newest protocol's checks, which answer about
    a missing `params._meta` envelope: the client is told to fix its body when its header names
    no version at all. Any protocol version the SDK speaks passes (none sent: the default).
    """
    from mcp_types.version import KNOWN_PROTOCOL_VERSIONS

    sent = request.headers.get("MCP-Protocol-Version")
    if sent is None or sent in KNOWN_PROTOCOL_VERSIONS:
        return None
    return (
        f"MCP-Protocol-Version: {sent!r} is not a protocol version this server speaks; send one "
        f"of {', '.join(KNOWN_PROTOCOL_VERSIONS)}, or no header for the default"
    )


def envelope_problem(body: bytes) -> str | None:
    """Say what is wrong with a JSON-RPC message's envelope, or return None (also for a body
    that is no JSON at all, which the SDK answers as a parse error itself).

    The SDK reads a message whose id is an object, an array, a fraction or a boolean as a
    notification, answers 202 and drops it, so the client waits for an answer that never comes;
    it answers a wrong `jsonrpc`, a missing `method` or `params` that are no object with a
    union's validation dump under "Invalid params"; and it keeps the last value of a key an
    object repeats, where a REST body is refused. MCP wants an id that is a string or an
    integer, and one message per POST.
    """
    try:
        message = json.loads(body, object_pairs_hook=object_once)
    except RepeatedKey as repeated:  # the SDK's parser kept the last value without a word
        return str(repeated).rstrip(".")
    except RecursionError:  # json recurses once per level: thousands of them were a 500
        return "the message nests too deeply; flatten it to at most 100 levels"
    except ValueError:
        return None
    if not isinstance(message, dict):
        return "send one JSON-RPC message, a JSON object, per request"
    if unknown := sorted(message.keys() - _ENVELOPE_KEYS):
        # The SDK ignored them, as a REST body's unknown fields are not.
        members = ", ".join(sorted(_ENVELOPE_KEYS))
        return f"{unknown[0]}: not a member of a JSON-RPC message ({members})"
    if message.get("jsonrpc") != "2.0":
        return 'jsonrpc: must be "2.0"'
    if "id" in message and (
        isinstance(message["id"], bool) or not isinstance(message["id"], str | int)
    ):
        return "id: must be a string or an integer (MCP allows no other ids)"
    if "method" in message and not isinstance(message["method"], str):
        return "method: must be a string, the name of the method"
    if "method" not in message and not {"result", "error"} & message.keys():
        return "method: required (a request or notification names its method)"
    if "params" in message and not isinstance(message["params"], dict):
        return "params: must be an object"
    method = message.get("method")
    if method is not None and "id" not in message and not method.startswith("notifications/"):
        # Without an id a message is a notification, which the SDK drops unanswered: a tool
        # call sent so did nothing and said nothing.
        return f"id: required; {method} is a request, answered under its id"
    return _params_problem(method, message.get("params", {}))


# What the methods that name something take in params, beyond the SDK's "Invalid request
# parameters" (which names no field).
_NAMED_PARAMS = {"tools/call": ("name", "the tool's name"), "resources/read": ("uri", "its URI")}


def _params_problem(method, params: dict) -> str | None:
    if method not in _NAMED_PARAMS:
        return None
    name, what = _NAMED_PARAMS[method]
    if not isinstance(params.get(name), str):
        return f"params.{name}: required, a string: {what}"
    if method == "tools/call" and not isinstance(params.get("arguments", {}), dict):
        return "params.arguments: must be an object of the tool's arguments"
    members = _params_members(method)
    if unknown := sorted(params.keys() - members):
        return (
            f"params.{unknown[0]}: not a member of {method}'s params ({', '.join(sorted(members))})"
        )
    return None


def _params_members(method: str) -> set[str]:
    """The members the SDK's model of the method's params has (it ignored any other)."""
    from mcp import types  # the SDK loads on the first MCP request

    model = {
        "tools/call": types.CallToolRequestParams,
        "resources/read": types.ReadResourceRequestParams,
    }[method]
    return {field.alias or name for name, field in model.model_fields.items()}


@csrf_exempt  # a bearer-key API, like the REST one: no cookies, so no cross-site forgery
def mcp_view(request):
    """Serve one Streamable HTTP POST of the MCP protocol for the agent of the bearer key."""
    scheme, _, key = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        return _refuse("Send the agent's API key as 'Authorization: Bearer <api key>'.")
    try:
        api_key = api_key_authenticate(key.strip())
    except KeyRejected as exc:
        return _refuse(str(exc))
    if (refused := _throttled(api_key)) is not None:
        return refused
    if request.method != "POST":
        response = JsonResponse(
            error_body("method_not_allowed", "This endpoint is stateless: POST only."), status=405
        )
        response["Allow"] = "POST"
        return response
    # The SDK loads on the first MCP request.
    from mcp_types.jsonrpc import UNSUPPORTED_PROTOCOL_VERSION

    from apps.agenttools.mcp_server import serve

    # read(), not .body: .body is capped at Django's DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MiB), and
    # ApiBodyLimitMiddleware has held Content-Length to API_MAX_BODY_BYTES, as for the REST API.
    sent = request.read()

    def refuse(code: int, message: str) -> HttpResponse:
        return _rpc_error(code, message, status=400, request_id=request_id(sent))

    if request.GET:  # the message says everything; a query parameter would be ignored
        name = next(iter(request.GET))
        return refuse(INVALID_REQUEST, f"Invalid request: {name}: /mcp takes no query parameters.")
    if (problem := protocol_version_problem(request)) is not None:
        return refuse(UNSUPPORTED_PROTOCOL_VERSION, f"{problem}.")
    if (problem := envelope_problem(sent)) is not None:
        return refuse(INVALID_REQUEST, f"Invalid request: {problem}.")
    status, headers, body = serve(_scope(request), sent, api_key.agent)
    response = HttpResponse(body, status=status)
    for name, value in headers:
        if name.lower() not in (b"content-length", b"connection"):
            response[name.decode("latin-1")] = value.decode("latin-1")
    return response
