"""Tool calls over either client: the stdlib StdioClient (dict results) or
the official mcp ClientSession (CallToolResult objects, async)."""

from __future__ import annotations

import json
from typing import Any, Mapping

from .errors import ToolError


def result_text(name: str, result: Any) -> str:
    """The text of a tools/call result; isError raises ToolError."""
    if isinstance(result, Mapping):
        content = result.get("content") or []
        is_error = bool(result.get("isError"))
        text = "".join(str(c.get("text", "")) for c in content if isinstance(c, Mapping))
    else:  # mcp.types.CallToolResult
        content = getattr(result, "content", None) or []
        is_error = bool(getattr(result, "isError", False))
        text = "".join(str(getattr(c, "text", "")) for c in content)
    if is_error:
        raise ToolError(name, text)
    return text


def result_json(name: str, result: Any) -> Any:
    text = result_text(name, result)
    try:
        return json.loads(text)
    except ValueError:
        raise ToolError(name, f"answer is not JSON: {text[:64]} ({len(text)} bytes)") from None


def call_json(client: Any, name: str, arguments: Mapping[str, Any]) -> Any:
    """A synchronous tool call whose answer is JSON."""
    raw = client.call_tool(name, dict(arguments))
    if hasattr(raw, "__await__"):
        raw.close()  # a coroutine: the client is async
        raise TypeError("this client is async (an mcp ClientSession?): use the *_async functions or AsyncAiMemory")
    return result_json(name, raw)


async def call_json_async(session: Any, name: str, arguments: Mapping[str, Any]) -> Any:
    """An awaited tool call (mcp ClientSession.call_tool) whose answer is JSON."""
    return result_json(name, await session.call_tool(name, dict(arguments)))
