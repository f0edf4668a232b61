"""CodeWeaver as an MCP server: `codeweaver mcp` (stdio) and `/mcp` on `codeweaver serve`."""
