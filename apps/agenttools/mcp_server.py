"""The MCP server of the tool registry, and one HTTP exchange through the SDK's transport.

Imported by mcp_endpoint on the first request to /mcp: the SDK takes over a second of CPU to
import, which no process that never serves /mcp should pay (gunicorn workers, manage.py).

Where it runs, and why. Each exchange runs on the request thread's own event loop, and the
SDK's handlers call the tools directly in that thread, so a tool uses the request's database
connection exactly as a REST view does. The first version used asgiref (async_to_sync around
the SDK, sync_to_async back for each tool): a new thread and loop per request, and four
hand-overs between the two threads, each waiting for the OS to schedule the other one.
Profiled in process with the Django test client against POST /api/v1/tools/call running the
same tool, on a loaded 2-core machine, this module's changes (the loop here, the schema lookup
and the dropped tracing below) cut the protocol's CPU per call from about 2.5 ms to 0.8 ms for
a client of the 2025 protocol versions and from about 10 ms to 0.4 ms at 2026-07-28 (the SDK's
own client), and the hand-overs' waits went with the thread.
"""

import asyncio
import contextvars
import json
import logging
import threading
import weakref

import anyio
from django.conf import settings
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INTERNAL_ERROR,
    CallToolResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListToolsResult,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    TextContent,
    TextResourceContents,
    Tool,
)

from apps.agenttools.resources import OBSERVATIONS_TEMPLATE, resource_list, resource_read
from apps.agenttools.services import TOOLS, tool_call, tool_schema
from apps.core.errors import ApplicationError

# The SDK logs its session manager's start and stop at INFO; stateless, that is twice per
# request, which would bury the server's own log. Its warnings and errors still show.
for _name in ("mcp.server.streamable_http_manager", "mcp.server.streamable_http"):
    logging.getLogger(_name).setLevel(logging.WARNING)

logger = logging.getLogger(__name__)

# The agent of the request being served; set by serve(), read by the tool handler.
_agent = contextvars.ContextVar("mcp_agent")


def _in_request_thread(function, **kwargs):
    """Call a synchronous service from a handler, as the request's own thread would.

    The exchange's loop runs in the request's thread and serves nothing else, so blocking it
    for the call is harmless. Django refuses database access while a loop runs in the thread
    (its guard against blocking a shared loop and sharing a connection between coroutines,
    neither of which can happen here); the call is made with the loop marked as not running,
    through asyncio's hook for loop implementations, instead of in another thread.
    """
    loop = asyncio.get_running_loop()
    asyncio._set_running_loop(None)
    try:
        return function(**kwargs)
    finally:
        asyncio._set_running_loop(loop)


async def _list_tools(ctx, params) -> ListToolsResult:
    return ListToolsResult(
        tools=[
            Tool(name=entry.name, description=entry.description, input_schema=tool_schema(name))
            for name, entry in TOOLS.items()
        ]
    )


async def _call_tool(ctx, params) -> CallToolResult:
    agent = _agent.get()
    try:
        result = _in_request_thread(
            tool_call, agent=agent, name=params.name, arguments=params.arguments or {}
        )
    except ApplicationError as exc:
        # A tool error, not a protocol error: the model reads it and can fix its call.
        return CallToolResult(content=[TextContent(text=exc.message)], is_error=True)
    except Exception:
        # A failure of the server, as a REST call's 500: logged with its traceback, and answered
        # as JSON-RPC's internal error. The SDK answered it with the exception's own text (a
        # database's message) under code 0.
        logger.exception("MCP tool %s failed", params.name)
        raise MCPError(INTERNAL_ERROR, "The server failed; the error was logged.") from None
    return CallToolResult(content=[TextContent(text=json.dumps(result))], structured_content=result)


# The error code MCP gives an unknown resource.
RESOURCE_NOT_FOUND = -32002


async def _list_resources(ctx, params) -> ListResourcesResult:
    found = _in_request_thread(resource_list, agent=_agent.get())
    return ListResourcesResult(
        resources=[Resource(uri=r.uri, name=r.name, mime_type=r.mime_type) for r in found]
    )


async def _list_resource_templates(ctx, params) -> ListResourceTemplatesResult:
    template = ResourceTemplate(
        uri_template=OBSERVATIONS_TEMPLATE,
        name="thread-observations",
        description="What the thread's observer noted so far (its active observations).",
        mime_type="text/plain",
    )
    return ListResourceTemplatesResult(resource_templates=[template])


async def _read_resource(ctx, params) -> ReadResourceResult:
    try:
        found = _in_request_thread(resource_read, agent=_agent.get(), uri=str(params.uri))
    except ApplicationError as exc:
        raise MCPError(RESOURCE_NOT_FOUND, exc.message) from None
    contents = TextResourceContents(uri=found.uri, mime_type=found.mime_type, text=found.text)
    return ReadResourceResult(contents=[contents])


def _input_schema(name: str) -> dict | None:
    return tool_schema(name) if name in TOOLS else None


SERVER = Server(
    "memory-console",
    version=settings.APP_VERSION,
    instructions="Memory for this agent: log messages, get the assembled context before a "
    "model call, search and recall memory, propose entries, keep notes and the plan of a "
    "task. Resources: your notes and a thread's observations.",
    on_list_tools=_list_tools,
    on_call_tool=_call_tool,
    on_list_resources=_list_resources,
    on_list_resource_templates=_list_resource_templates,
    on_read_resource=_read_resource,
    # At protocol 2026-07-28 (what the SDK's own client speaks) the SDK checks a tools/call's
    # Mcp-Param-* headers against the tool's input schema; without this lookup it runs the
    # whole tools/list handler for each call to find it, which cost about 8 ms of CPU per call.
    get_tool_input_schema=_input_schema,
)
# The SDK wraps every message in an OpenTelemetry span, a no-op span when no exporter is
# installed, as here (the server's metrics are Prometheus ones, apps/core/metrics.py); even so
# it cost about 0.6 ms of CPU per call, half of what the protocol adds, so it is dropped as the
# SDK provides.
SERVER.middleware.clear()


class _ThreadLoop(threading.local):
    """Each thread's event loop for its exchanges, closed when the thread is gone.

    Kept rather than made per request (asyncio.run): a new loop each time cost about 1 ms more
    CPU per call in the profile above. A thread that ends (runserver and the test server start
    one per connection) closes its loop when the thread object is collected.
    """

    loop = None

    def get(self) -> asyncio.AbstractEventLoop:
        if self.loop is None:
            self.loop = asyncio.new_event_loop()
            weakref.finalize(threading.current_thread(), self.loop.close)
        return self.loop


_thread_loop = _ThreadLoop()


def serve(scope: dict, body: bytes, agent) -> tuple[int, list, bytes]:
    """Run one HTTP exchange through the SDK in this thread; return (status, headers, body)."""
    return _thread_loop.get().run_until_complete(_exchange(scope, body, agent))


async def _exchange(scope: dict, body: bytes, agent) -> tuple[int, list, bytes]:
    sent = {"status": 500, "headers": [], "body": b""}
    delivered, answered = False, anyio.Event()

    async def receive():
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await answered.wait()  # the client stays connected until it has its answer
        return {"type": "http.disconnect"}

    async def send(message):
        if message["type"] == "http.response.start":
            sent["status"], sent["headers"] = message["status"], message.get("headers", [])
        elif message["type"] == "http.response.body":
            sent["body"] += message.get("body", b"")
            if not message.get("more_body", False):
                answered.set()

    _agent.set(agent)
    # A manager's run() may be entered once; a stateless one holds nothing between requests,
    # so each request gets its own (about 0.1 ms of CPU; keeping one would mean holding its
    # task group open on the thread's loop between requests).
    manager = StreamableHTTPSessionManager(app=SERVER, json_response=True, stateless=True)
    async with manager.run():
        await manager.handle_request(scope, receive, send)
    return sent["status"], sent["headers"], sent["body"]
