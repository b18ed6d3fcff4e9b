"""Typed client for the ai-memory MCP server.

Works with no dependency (ai_memory.StdioClient, a standard-library stdio
client) and with the official ``mcp`` package's ClientSession
(AsyncAiMemory, require_profile_async)."""

from ._version import __version__
from .errors import McpError, PendingApproval, ProfileNotLoaded, ToolError, profile_hint
from .memory import AiMemory, AsyncAiMemory, spawn_args
from .profile import BASE_FAMILY, RequireProfileResult, require_profile, require_profile_async, resolve_profile
from .stdio import PROTOCOL_VERSION, StdioClient

__all__ = [
    "AiMemory",
    "AsyncAiMemory",
    "BASE_FAMILY",
    "McpError",
    "PROTOCOL_VERSION",
    "PendingApproval",
    "ProfileNotLoaded",
    "RequireProfileResult",
    "StdioClient",
    "ToolError",
    "__version__",
    "profile_hint",
    "require_profile",
    "require_profile_async",
    "resolve_profile",
    "spawn_args",
]
