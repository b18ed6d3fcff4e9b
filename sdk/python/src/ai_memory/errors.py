"""Errors the SDK raises."""

from __future__ import annotations

from typing import Any


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


def profile_hint(requested: str, transport: str | None = None) -> str:
    """What to do about a missing profile, for the way the server was started
    ("stdio", "http", or None when the client cannot tell)."""
    if transport == "stdio":
        return f"restart the MCP server with --profile {requested} or set AI_MEMORY_PROFILE={requested}"
    if transport == "http":
        return f"restart ai-memory serve with --profile {requested} or set AI_MEMORY_PROFILE={requested} where it runs"
    return f"start the server with --profile {requested} (ai-memory mcp, or ai-memory serve over HTTP) or set AI_MEMORY_PROFILE={requested}"


class ProfileNotLoaded(Exception):
    """The live server does not serve every family a profile needs."""

    def __init__(self, requested: str, missing: list[str], denied: dict[str, str] | None = None, transport: str | None = None) -> None:
        self.requested = requested
        self.missing = missing
        self.hint = profile_hint(requested, transport)
        self.denied = denied or {}
        super().__init__(f"profile {requested} is not fully loaded: missing {', '.join(missing)}; {self.hint}")


class PendingApproval(Exception):
    """A namespace's standard queued the write for approval: nothing was
    written yet. pending is the server's answer (status, pending_id, action,
    namespace, approver, reason); memory_pending_approve takes its pending_id."""

    def __init__(self, tool: str, pending: dict[str, Any]) -> None:
        self.tool = tool
        self.pending = pending
        super().__init__(f"{tool}: queued for approval as {pending.get('pending_id')}: {pending.get('reason', '')}")
