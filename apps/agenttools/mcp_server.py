"""The MCP server of the tool registry, and one HTTP exchange through the SDK's transport.

Imported by mcp_endpoint on the first request to /mcp: the SDK takes over a second of CPU to
import, which no process that never serves /mcp should pay (gunicorn workers, manage.py).
The tools run in the request's own thread (sync_to_async, thread-sensitive), so they use the
request's database connection, as a REST view would.
"""

import contextvars
import json
import logging

import anyio
from asgiref.sync import sync_to_async
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.exceptions import MCPError
from mcp_types import (
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

# The agent of the request being served; set by serve(), read by the tool handler.
_agent = contextvars.ContextVar("mcp_agent")


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
        result = await sync_to_async(tool_call, thread_sensitive=True)(
            agent=agent, name=params.name, arguments=params.arguments or {}
        )
    except ApplicationError as exc:
        # A tool error, not a protocol error: the model reads it and can fix its call.
        return CallToolResult(content=[TextContent(text=exc.message)], is_error=True)
    return CallToolResult(content=[TextContent(text=json.dumps(result))], structured_content=result)


# The error code MCP gives an unknown resource.
RESOURCE_NOT_FOUND = -32002


async def _list_resources(ctx, params) -> ListResourcesResult:
    found = await sync_to_async(resource_list, thread_sensitive=True)(agent=_agent.get())
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
        found = await sync_to_async(resource_read, thread_sensitive=True)(
            agent=_agent.get(), uri=str(params.uri)
        )
    except ApplicationError as exc:
        raise MCPError(RESOURCE_NOT_FOUND, exc.message) from None
    contents = TextResourceContents(uri=found.uri, mime_type=found.mime_type, text=found.text)
    return ReadResourceResult(contents=[contents])


SERVER = Server(
    "memory-console",
    instructions="Memory for this agent: log messages, get the assembled context before a "
    "model call, search and recall memory, propose entries, keep notes and the plan of a "
    "task. Resources: your notes and a thread's observations.",
    on_list_tools=_list_tools,
    on_call_tool=_call_tool,
    on_list_resources=_list_resources,
    on_list_resource_templates=_list_resource_templates,
    on_read_resource=_read_resource,
)


async def serve(scope: dict, body: bytes, agent) -> tuple[int, list, bytes]:
    """Run one HTTP exchange through the SDK and return (status, headers, body)."""
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
    # so each request gets its own (bench/mcp.py measures what the endpoint adds to a call).
    manager = StreamableHTTPSessionManager(app=SERVER, json_response=True, stateless=True)
    async with manager.run():
        await manager.handle_request(scope, receive, send)
    return sent["status"], sent["headers"], sent["body"]
