"""The one registry of tools: their schemas for a model, and the call that runs one.

A tool is a pydantic model of its arguments (its JSON Schema is what a model sees, its
validation what a bad call is told) and a thin function into the same services and selectors
the REST API calls. MCP (apps.agenttools.mcp) and POST /api/v1/tools/call both run tools
through tool_call(), so isolation, auditing and error messages are the same on both.

Adding a tool is a few lines: a model of its arguments, a function, and @tool(...) on it.
"""

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass

from django.core.serializers.json import DjangoJSONEncoder
from pydantic import BaseModel, ValidationError

from apps.audit.services import audit_record
from apps.core.errors import ApplicationError
from apps.core.metrics import tool_call_record
from apps.core.text import (
    JSON_MAX_DEPTH,
    RepeatedKey,
    json_path,
    json_too_deep,
    non_finite_number,
    object_once,
)
from apps.tenancy.models import Agent


@dataclass(frozen=True)
class Caller:
    """Who runs a tool: the agent of the API key, as the audit log names it."""

    agent: Agent

    @property
    def actor(self) -> str:
        return f"agent:{self.agent.project.slug}/{self.agent.slug}"


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    arguments: type[BaseModel]
    run: Callable[[Caller, BaseModel], dict]
    writes: bool  # a write is audited with the tool's name and arguments


class ToolError(ApplicationError):
    """A call the caller can fix; its message is what the model is told."""


TOOLS: dict[str, Tool] = {}


def tool(*, name: str, arguments: type[BaseModel], writes: bool = False):
    """Register the decorated function as a tool; its docstring is the model's description."""

    def register(run):
        description = " ".join((run.__doc__ or "").split())
        TOOLS[name] = Tool(name, description, arguments, run, writes)
        return run

    return register


@functools.cache  # pydantic builds a schema anew each time: 5 ms of CPU for every tools/list
def tool_schema(name: str) -> dict:
    """Return the JSON Schema of a tool's arguments (shared between callers: read it only)."""
    schema = TOOLS[name].arguments.model_json_schema()
    schema.pop("title", None)
    return schema


def tool_definitions() -> list[dict]:
    """Every tool as an OpenAI-style function definition, ready for `tools=` of a chat call."""
    return [
        {
            "type": "function",
            "function": {
                "name": entry.name,
                "description": entry.description,
                "parameters": tool_schema(entry.name),
            },
        }
        for entry in TOOLS.values()
    ]


def tool_call(*, agent: Agent, name: str, arguments) -> dict:
    """Validate the arguments, run the tool for the agent, and return its JSON-safe result.

    Raises ToolError (400) for an unknown tool or bad arguments, naming what to fix; the
    services' own errors (404 for another agent's ids, 409 for a stale plan) pass through.
    Each call is counted in the metrics by tool and outcome.
    """
    label = name if name in TOOLS else "unknown"  # a metric's labels stay a known set
    try:
        result = _tool_run(agent=agent, name=name, arguments=arguments)
    except ToolError:
        tool_call_record(tool=label, outcome="refused")
        raise
    except Exception:
        tool_call_record(tool=label, outcome="error")
        raise
    tool_call_record(tool=label, outcome="ok")
    return result


def _tool_run(*, agent: Agent, name: str, arguments) -> dict:
    entry = TOOLS.get(name)
    if entry is None:
        raise ToolError(
            f"No tool {name!r}; the tools are: {', '.join(TOOLS)}.", code="unknown_tool"
        )
    too_deep = ToolError(
        f"arguments: nests more than {JSON_MAX_DEPTH} levels deep; flatten it, as a request "
        "body must be."
    )
    if isinstance(arguments, str):  # as a chat model writes them: a JSON text
        try:
            arguments = json.loads(arguments or "{}", object_pairs_hook=object_once)
        except RecursionError:
            # json.loads recurses once per level: thousands of them would be a 500.
            raise too_deep from None
        except RepeatedKey as repeated:  # as a REST body's: json.loads kept the last value
            raise ToolError(f"arguments: {repeated}") from None
        except ValueError:
            raise ToolError("arguments: not valid JSON; send a JSON object.") from None
    if json_too_deep(arguments):
        raise too_deep
    if not isinstance(arguments, dict):
        raise ToolError("arguments: must be a JSON object of the tool's parameters.")
    non_finite = non_finite_number(arguments)
    if non_finite:
        where, number = _where(non_finite[0]), non_finite[1]
        # json.loads reads NaN and Infinity (so does the MCP SDK); they are no JSON, and a
        # payload holding one failed in the database's JSON check, a 500.
        raise ToolError(
            f"{where}: {number} is not a JSON number; send a finite number.",
            details={"errors": [{"field": where, "message": "Not a finite number."}]},
        )
    try:
        parsed = entry.arguments.model_validate(arguments)
    except ValidationError as exc:
        raise ToolError(validation_message(exc), details={"errors": _errors(exc)}) from None
    caller = Caller(agent=agent)
    result = entry.run(caller, parsed)
    if entry.writes:
        audit_record(
            actor=caller.actor,
            action=f"tool.{name}",
            object_type="tool",
            object_id=name,
            project_id=agent.project_id,
            summary=f"{name} through the tools API",
            after=_brief(json_safe(arguments)),
        )
    return json_safe(result)


def json_safe(value):
    """Return the value as plain JSON types (UUIDs and datetimes as strings)."""
    return json.loads(json.dumps(value, cls=DjangoJSONEncoder))


def _brief(value, limit: int = 200):
    """Shorten long strings, so an audit event records what was done, not the whole text."""
    if isinstance(value, dict):
        return {key: _brief(item, limit) for key, item in value.items()}
    if isinstance(value, list):
        return [_brief(item, limit) for item in value]
    if isinstance(value, str) and len(value) > limit:
        return value[:limit] + "…"
    return value


def validation_message(exc: ValidationError) -> str:
    """Name each bad argument and what is wrong with it, e.g. 'messages[0].role: ...'."""
    return "; ".join(f"{_where(error['loc'])}: {error['msg']}" for error in exc.errors()[:5])


def _where(loc) -> str:
    text = json_path(tuple(loc))
    return f"arguments.{text}" if text else "arguments"


def _errors(exc: ValidationError) -> list[dict]:
    return [{"field": _where(error["loc"]), "message": error["msg"]} for error in exc.errors()]
