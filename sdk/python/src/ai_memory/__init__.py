"""Typed client for the ai-memory MCP server.

Works with no dependency (ai_memory.StdioClient, a standard-library stdio
client) and with the official ``mcp`` package's ClientSession
(AsyncAiMemory, require_profile_async)."""

from .errors import McpError, ProfileNotLoaded, ToolError
from .memory import AiMemory, AsyncAiMemory, spawn_args
from .profile import BASE_FAMILY, RequireProfileResult, require_profile, require_profile_async, resolve_profile
from .stdio import PROTOCOL_VERSION, StdioClient

__all__ = [
    "AiMemory",
    "AsyncAiMemory",
    "BASE_FAMILY",
    "McpError",
    "PROTOCOL_VERSION",
    "ProfileNotLoaded",
    "RequireProfileResult",
    "StdioClient",
    "ToolError",
    "require_profile",
    "require_profile_async",
    "resolve_profile",
    "spawn_args",
]
__version__ = "0.1.0"
