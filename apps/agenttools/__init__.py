"""Memory as tools: one registry served as MCP at /mcp and as function calling at /api/v1/tools."""
