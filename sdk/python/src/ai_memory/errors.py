"""Errors the SDK raises."""

from __future__ import annotations


class McpError(Exception):
    """A JSON-RPC error answer (code and message as the server sent them)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"{message} (code {code})")
        self.code = code
        self.message = message


class ToolError(Exception):
    """A tool answered with isError; the text is the server's message."""

    def __init__(self, tool: str, message: str) -> None:
        super().__init__(f"{tool}: {message}")
        self.tool = tool
        self.message = message


class ProfileNotLoaded(Exception):
    """The live server does not serve every family a profile needs."""

    def __init__(self, requested: str, missing: list[str], denied: dict[str, str] | None = None) -> None:
        self.requested = requested
        self.missing = missing
        self.hint = f"restart the MCP server with --profile {requested} or set AI_MEMORY_PROFILE={requested}"
        self.denied = denied or {}
        super().__init__(f"profile {requested} is not fully loaded: missing {', '.join(missing)}; {self.hint}")
