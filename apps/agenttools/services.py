"""What other apps call: the tool definitions and one tool call, for an agent."""

from apps.agenttools import tools, tools_notes  # noqa: F401  (registers the tools)
from apps.agenttools.briefing import briefing_build
from apps.agenttools.registry import TOOLS, ToolError, tool_call, tool_definitions, tool_schema

__all__ = ["TOOLS", "briefing_build", "ToolError", "tool_call", "tool_definitions", "tool_schema"]
