"""require_profile: does the live server serve every family a profile needs?"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence, TypedDict

from .errors import ProfileNotLoaded, ToolError

BASE_FAMILY = "core"


class RequireProfileResult(TypedDict):
    requested: str
    families: list[str]
    expanded: list[str]


def resolve_profile(profile: str, table: Mapping[str, Sequence[str]], families: Sequence[str]) -> list[str]:
    """The families profile asks for, with the server's profile table and
    family list (so third-party families count); core is always in.
    Unknown or uppercase names raise ValueError naming the valid ones."""
    s = profile.strip()
    if s.lower() != s:
        raise ValueError(f"profile {s!r}: names are lowercase (for example {s.lower()!r})")
    out = {BASE_FAMILY}
    for tok in (t.strip() for t in s.split(",")):
        if not tok:
            continue
        if tok in table:
            out.update(table[tok])
        elif tok in families:
            out.add(tok)
        else:
            raise ValueError(
                f"unknown profile or family {tok!r}: profiles are {', '.join(table)}; families are {', '.join(families)}"
            )
    return [f for f in families if f in out] + sorted(f for f in out if f not in families)


def _check(caps: Mapping[str, Any], profile: str) -> tuple[list[str], list[dict[str, Any]], set[str]]:
    fams = caps.get("families")
    if not fams:
        raise RuntimeError(
            f"the server's capabilities overview (schema_version {caps.get('schema_version')}) has no families block; "
            "require_profile needs ai-memory 0.1 or later"
        )
    rows = list(fams["families"])
    names = [r["name"] for r in rows]
    table = caps.get("profiles") or {"core": ["core"], "full": names}
    wanted = resolve_profile(profile, table, names)
    loaded = {r["name"] for r in rows if r.get("loaded")}
    return wanted, rows, loaded


def require_profile(client: Any, profile: str, *, expand: bool = False) -> RequireProfileResult:
    """Reads the live server's capabilities overview over client (a
    StdioClient, an AiMemory, or anything with a synchronous call_tool) and
    raises ProfileNotLoaded unless every family of profile is loaded. With
    expand, first loads what is missing through memory_capabilities
    {family, include_schema: true}, where the server's allowlist permits."""
    from .call import call_json

    return _require(lambda name, args: call_json(client, name, args), profile, expand, _transport_of(client))


async def require_profile_async(session: Any, profile: str, *, expand: bool = False, transport: str | None = None) -> RequireProfileResult:
    """require_profile for an async client: the official mcp ClientSession.
    A session does not say how it is connected: transport ("stdio" or
    "http") picks ProfileNotLoaded's hint."""
    from .call import call_json_async

    caps = await call_json_async(session, "memory_capabilities", {})
    wanted, rows, loaded = _check(caps, profile)
    denied: dict[str, str] = {}
    expanded: list[str] = []
    if expand:
        for f in [f for f in wanted if f not in loaded]:
            reason = _not_installed(rows, f)
            if reason:
                denied[f] = reason
                continue
            try:
                got = await call_json_async(session, "memory_capabilities", {"family": f, "include_schema": True})
            except ToolError as e:
                denied[f] = e.message
                continue
            if got.get("loaded"):
                loaded.add(f)
                expanded.append(f)
    return _finish(profile, wanted, loaded, expanded, denied, transport)


def _transport_of(client: Any) -> str | None:
    """"stdio" for the stdlib StdioClient (or an AiMemory around one)."""
    inner = getattr(client, "client", client)
    kind = getattr(inner, "transport_kind", None)
    return kind if kind in ("stdio", "http") else None


def _require(call: Callable[[str, Mapping[str, Any]], Any], profile: str, expand: bool, transport: str | None) -> RequireProfileResult:
    caps = call("memory_capabilities", {})
    wanted, rows, loaded = _check(caps, profile)
    denied: dict[str, str] = {}
    expanded: list[str] = []
    if expand:
        for f in [f for f in wanted if f not in loaded]:
            reason = _not_installed(rows, f)
            if reason:
                denied[f] = reason
                continue
            try:
                got = call("memory_capabilities", {"family": f, "include_schema": True})
            except ToolError as e:
                denied[f] = e.message
                continue
            if got.get("loaded"):
                loaded.add(f)
                expanded.append(f)
    return _finish(profile, wanted, loaded, expanded, denied, transport)


def _not_installed(rows: Sequence[Mapping[str, Any]], family: str) -> str:
    for r in rows:
        if r["name"] == family and r.get("installed") is False:
            return "no installed plugin provides it"
    return ""


def _finish(
    profile: str, wanted: list[str], loaded: set[str], expanded: list[str], denied: dict[str, str], transport: str | None
) -> RequireProfileResult:
    missing = [f for f in wanted if f not in loaded]
    if missing:
        raise ProfileNotLoaded(profile.strip(), missing, denied, transport)
    return {"requested": profile.strip(), "families": wanted, "expanded": expanded}


__all__ = ["BASE_FAMILY", "RequireProfileResult", "resolve_profile", "require_profile", "require_profile_async"]
