"""Typed calls of ai-memory's core tools."""

from __future__ import annotations

import os
import subprocess
from typing import Any, Mapping, cast

from .call import call_json, call_json_async
from .errors import PendingApproval
from .profile import RequireProfileResult, require_profile, require_profile_async
from .stdio import StdioClient
from .types import Capabilities, FamilySchemas, ListResult, MemoryWithLinks, RecallResult, SearchResult, StoreResult


def _args(d: Mapping[str, Any], **fixed: Any) -> dict[str, Any]:
    out = {k: v for k, v in d.items() if v is not None}
    out.update(fixed)
    return out


def _stored(answer: Any) -> StoreResult:
    """memory_store's answer, or PendingApproval when a standard queued it."""
    if "pending_id" in answer:
        raise PendingApproval("memory_store", answer)
    return cast(StoreResult, answer)


# The server leaves out an empty list of memories (fewer tokens for an
# agent); these results always have one.
def _with_list(answer: Any, key: str) -> Any:
    answer.setdefault(key, [])
    return answer


def spawn_args(profile: str | None, data_dir: str | None, agent_id: str | None) -> list[str]:
    """The arguments of `ai-memory mcp` for these options."""
    args = ["mcp"]
    if profile:
        args += ["--profile", profile]
    if data_dir:
        args += ["--data-dir", data_dir]
    if agent_id:
        args += ["--agent-id", agent_id]
    return args


class AiMemory:
    """ai-memory's core tools over a synchronous client (the stdlib
    StdioClient, or anything with call_tool(name, arguments))."""

    def __init__(self, client: Any) -> None:
        self.client = client

    @classmethod
    def spawn(
        cls,
        binary: str = "ai-memory",
        *,
        profile: str | None = None,
        data_dir: str | None = None,
        agent_id: str | None = None,
        env: Mapping[str, str] | None = None,
        client_name: str = "ai-memory-sdk",
        stderr: int | None = subprocess.DEVNULL,
        cwd: str | None = None,
    ) -> "AiMemory":
        """Starts `ai-memory mcp --profile P` over stdio (environment: this
        process's plus env; inside a git work tree, cwd's project is the
        default namespace)."""
        full_env = dict(os.environ)
        full_env.update(env or {})
        return cls(StdioClient(binary, spawn_args(profile, data_dir, agent_id), env=full_env, client_name=client_name, stderr=stderr, cwd=cwd))

    def close(self) -> None:
        close = getattr(self.client, "close", None)
        if close:
            close()

    def __enter__(self) -> "AiMemory":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None) -> Any:
        return self.client.call_tool(name, dict(arguments or {}))

    def capabilities(self) -> Capabilities:
        return cast(Capabilities, call_json(self.client, "memory_capabilities", {}))

    def load_family(self, family: str) -> FamilySchemas:
        return cast(FamilySchemas, call_json(self.client, "memory_capabilities", {"family": family, "include_schema": True}))

    def run(self, tool: str, arguments: Mapping[str, Any] | None = None) -> Any:
        """Any tool through memory_capabilities (its family loads on first use)."""
        return call_json(self.client, "memory_capabilities", {"tool": tool, "arguments": dict(arguments or {})})

    def require_profile(self, profile: str, *, expand: bool = False) -> RequireProfileResult:
        return require_profile(self.client, profile, expand=expand)

    def store(self, title: str, content: str, **fields: Any) -> StoreResult:
        """Stores a memory; raises PendingApproval when the namespace's
        standard queued the write (nothing was written)."""
        return _stored(call_json(self.client, "memory_store", _args(fields, title=title, content=content, format="json")))

    def recall(self, context: str, **fields: Any) -> RecallResult:
        return cast(RecallResult, _with_list(call_json(self.client, "memory_recall", _args(fields, context=context, format="json")), "memories"))

    def list(self, **fields: Any) -> ListResult:
        return cast(ListResult, _with_list(call_json(self.client, "memory_list", _args(fields, format="json")), "memories"))

    def get(self, id: str) -> MemoryWithLinks:
        return cast(MemoryWithLinks, call_json(self.client, "memory_get", {"id": id, "format": "json"}))

    def search(self, query: str, **fields: Any) -> SearchResult:
        return cast(SearchResult, _with_list(call_json(self.client, "memory_search", _args(fields, query=query, format="json")), "results"))


class AsyncAiMemory:
    """The same calls over the official mcp package's ClientSession."""

    def __init__(self, session: Any) -> None:
        self.session = session

    async def capabilities(self) -> Capabilities:
        return cast(Capabilities, await call_json_async(self.session, "memory_capabilities", {}))

    async def load_family(self, family: str) -> FamilySchemas:
        return cast(FamilySchemas, await call_json_async(self.session, "memory_capabilities", {"family": family, "include_schema": True}))

    async def run(self, tool: str, arguments: Mapping[str, Any] | None = None) -> Any:
        return await call_json_async(self.session, "memory_capabilities", {"tool": tool, "arguments": dict(arguments or {})})

    async def require_profile(self, profile: str, *, expand: bool = False, transport: str | None = None) -> RequireProfileResult:
        return await require_profile_async(self.session, profile, expand=expand, transport=transport)

    async def store(self, title: str, content: str, **fields: Any) -> StoreResult:
        return _stored(await call_json_async(self.session, "memory_store", _args(fields, title=title, content=content, format="json")))

    async def recall(self, context: str, **fields: Any) -> RecallResult:
        answer = await call_json_async(self.session, "memory_recall", _args(fields, context=context, format="json"))
        return cast(RecallResult, _with_list(answer, "memories"))

    async def list(self, **fields: Any) -> ListResult:
        return cast(ListResult, _with_list(await call_json_async(self.session, "memory_list", _args(fields, format="json")), "memories"))

    async def get(self, id: str) -> MemoryWithLinks:
        return cast(MemoryWithLinks, await call_json_async(self.session, "memory_get", {"id": id, "format": "json"}))

    async def search(self, query: str, **fields: Any) -> SearchResult:
        return cast(SearchResult, _with_list(await call_json_async(self.session, "memory_search", _args(fields, query=query, format="json")), "results"))
