"""Shapes of the core tools' JSON answers and of the capabilities overview
(TypedDicts: the answers are plain dicts, typed for checkers)."""

from __future__ import annotations

from typing import Any, List, TypedDict


class _MemoryRequired(TypedDict):
    id: str
    title: str
    content: str  # cut (saying so) in recall, list and search; whole in get
    tier: str
    namespace: str
    priority: int
    confidence: float
    source: str
    created_at: str
    updated_at: str


class Memory(_MemoryRequired, total=False):
    tags: List[str]
    created_by: str  # absent on memories older than the field
    updated_by: str
    expires_at: str  # absent for tier long
    last_accessed_at: str
    access_count: int
    metadata: dict[str, Any]
    score: float  # recall only


class Link(TypedDict, total=False):
    source_id: str
    target_id: str
    relation: str
    created_at: str


class MemoryWithLinks(Memory, total=False):
    """memory_get's answer: the memory, content whole, and its links."""

    links: List[Link]


class _StoreRequired(TypedDict):
    id: str
    tier: str
    title: str
    namespace: str


class StoreResult(_StoreRequired, total=False):
    agent_id: str
    duplicate: bool  # the title existed: merged into it
    action: str
    potential_contradictions: List[str]


class StandardRow(TypedDict):
    namespace: str
    id: str
    title: str
    content: str


class _RecallRequired(TypedDict):
    count: int
    mode: str  # keyword or hybrid
    tokens_used: int
    memories: List[Memory]  # best first; the SDK fills in the [] the server leaves out


class RecallResult(_RecallRequired, total=False):
    semantic_reason: str
    budget_tokens: int
    budget_overflow: bool
    memories_dropped: int
    standard: StandardRow
    standards: List[StandardRow]


class ListResult(TypedDict):
    count: int
    memories: List[Memory]  # [] when none


class SearchResult(TypedDict):
    count: int
    results: List[Memory]  # [] when none


class _FamilyRowRequired(TypedDict):
    name: str
    tool_count: int
    loaded: bool
    tools: List[str]


class FamilyRow(_FamilyRowRequired, total=False):
    installed: bool  # present, and False, only when no plugin provides it


class FamiliesBlock(TypedDict):
    schema_version: str
    always_on: List[str]
    families: List[FamilyRow]


class _CapabilitiesRequired(TypedDict):
    schema_version: str
    version: str
    tier: str
    features: dict[str, Any]
    profile: str
    profiles: dict[str, List[str]]
    families: FamiliesBlock


class Capabilities(_CapabilitiesRequired, total=False):
    embedder: dict[str, Any]  # the embedding endpoint's state, when one is configured


class FamilySchemas(TypedDict):
    schema_version: str
    family: str
    loaded: bool
    tools: List[dict[str, Any]]
