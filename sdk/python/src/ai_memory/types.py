"""Shapes of the core tools' JSON answers and of the capabilities overview
(TypedDicts: the answers are plain dicts, typed for checkers)."""

from __future__ import annotations

from typing import Any, List, TypedDict


class _MemoryRequired(TypedDict):
    id: str
    title: str
    content: str
    tier: str
    namespace: str


class Memory(_MemoryRequired, total=False):
    priority: int
    confidence: float
    tags: List[str]
    source: str
    created_by: str
    updated_by: str
    created_at: str
    updated_at: str
    expires_at: str
    last_accessed_at: str
    access_count: int
    metadata: dict[str, Any]
    score: float


class StoreResult(TypedDict):
    id: str
    tier: str
    title: str
    namespace: str
    agent_id: str


class RecallResult(TypedDict, total=False):
    count: int
    mode: str
    tokens_used: int
    memories: List[Memory]


class ListResult(TypedDict, total=False):
    count: int
    memories: List[Memory]


class SearchResult(TypedDict, total=False):
    count: int
    results: List[Memory]


class FamilyRow(TypedDict, total=False):
    name: str
    tool_count: int
    loaded: bool
    installed: bool  # present, and False, only when no plugin provides it
    tools: List[str]


class FamiliesBlock(TypedDict):
    schema_version: str
    always_on: List[str]
    families: List[FamilyRow]


class Capabilities(TypedDict, total=False):
    schema_version: str
    version: str
    tier: str
    features: dict[str, Any]
    profile: str
    profiles: dict[str, List[str]]
    families: FamiliesBlock


class FamilySchemas(TypedDict):
    schema_version: str
    family: str
    loaded: bool
    tools: List[dict[str, Any]]
