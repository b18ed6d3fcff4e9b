"""Against the real binary with the standard-library client:
AI_MEMORY_TEST_BIN (make test sets it), else ../../bin."""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import types
import unittest
from pathlib import Path

from ai_memory import (
    AiMemory,
    AsyncAiMemory,
    PendingApproval,
    ProfileNotLoaded,
    StdioClient,
    ToolError,
    require_profile,
    require_profile_async,
    resolve_profile,
    spawn_args,
)

BIN = Path(os.environ.get("AI_MEMORY_TEST_BIN") or Path(__file__).resolve().parents[3] / "bin") / "ai-memory"


class Server(unittest.TestCase):
    def new_dir(self, config: str = "") -> str:
        d = tempfile.mkdtemp(prefix="aim")
        self.addCleanup(shutil.rmtree, d, True)
        Path(d, "config.toml").write_text(config)
        return d

    def spawn(self, profile: str, config: str = "", d: str | None = None, agent_id: str | None = None) -> AiMemory:
        d = d or self.new_dir(config)
        mem = AiMemory.spawn(
            str(BIN), profile=profile, data_dir=str(Path(d, "d")), agent_id=agent_id, client_name="py-sdk-test", cwd=d,
            env={"HOME": d, "AI_MEMORY_CONFIG": str(Path(d, "config.toml")), "AI_MEMORY_ENGINE_IDLE_TIMEOUT": "2s"},
        )
        self.addCleanup(mem.close)
        return mem

    def test_passes_under_the_right_profile(self) -> None:
        mem = self.spawn("graph")
        self.assertEqual(require_profile(mem.client, "graph"), {"requested": "graph", "families": ["core", "graph"], "expanded": []})
        mem.require_profile("core")

    def test_raises_with_the_exact_fields_under_core(self) -> None:
        mem = self.spawn("core")
        with self.assertRaises(ProfileNotLoaded) as cm:
            require_profile(mem, "graph")
        e = cm.exception
        self.assertEqual(e.requested, "graph")
        self.assertEqual(e.missing, ["graph"])
        self.assertEqual(e.hint, "restart the MCP server with --profile graph or set AI_MEMORY_PROFILE=graph")
        # A profile of several families names every one that is missing.
        with self.assertRaises(ProfileNotLoaded) as cm:
            require_profile(mem, "admin")
        self.assertEqual(cm.exception.missing, ["lifecycle", "governance"])
        self.assertEqual(cm.exception.hint, "restart the MCP server with --profile admin or set AI_MEMORY_PROFILE=admin")
        with self.assertRaisesRegex(ValueError, "lowercase"):
            require_profile(mem, "Graph")
        with self.assertRaisesRegex(ValueError, "unknown profile or family 'nope'"):
            require_profile(mem, "nope")

    def test_expands_when_asked_and_allowed(self) -> None:
        mem = self.spawn("core")
        self.assertEqual(require_profile(mem, "graph", expand=True)["expanded"], ["graph"])
        names = [t["name"] for t in mem.client.list_tools()]
        self.assertIn("memory_link", names)
        self.assertIn("notifications/tools/list_changed", mem.client.notifications)
        require_profile(mem, "graph")

    def test_no_expansion_where_the_allowlist_forbids_it(self) -> None:
        mem = self.spawn("core", '[mcp.allowlist]\n"*" = ["core"]\n')
        with self.assertRaises(ProfileNotLoaded) as cm:
            require_profile(mem, "graph", expand=True)
        self.assertEqual(cm.exception.missing, ["graph"])
        self.assertTrue(cm.exception.denied["graph"])

    def test_typed_core_wrappers(self) -> None:
        mem = self.spawn("core")
        caps = mem.capabilities()
        self.assertEqual(caps["profile"], "core")
        self.assertEqual(caps["profiles"]["graph"], ["core", "graph"])
        s = mem.store("SDK wrapper", "stored through the python wrapper", tags=["sdk"])
        self.assertEqual(s["agent_id"], "ai:py-sdk-test")
        self.assertEqual(mem.get(s["id"])["tags"], ["sdk"])
        self.assertEqual(mem.recall("python wrapper")["memories"][0]["id"], s["id"])
        self.assertEqual(mem.list(namespace="global")["count"], 1)
        self.assertEqual(mem.search("wrapper")["results"][0]["id"], s["id"])
        with self.assertRaisesRegex(ToolError, "content"):
            mem.store("no content", "")
        self.assertIsNotNone(mem.run("memory_get_links", {"id": s["id"]}))

    def test_empty_results_are_empty_lists(self) -> None:
        mem = self.spawn("core")
        rec = mem.recall("nothing stored yet")
        self.assertEqual((rec["count"], rec["memories"]), (0, []))
        self.assertEqual(mem.list()["memories"], [])
        self.assertEqual(mem.search("nothing")["results"], [])

    def test_a_queued_store_raises_pending_approval(self) -> None:
        d = self.new_dir()
        alice = self.spawn("admin", d=d, agent_id="ai:alice")
        rules = alice.store("team rules", "writes need approval", namespace="team")
        alice.run("memory_namespace_set_standard", {"namespace": "team", "id": rules["id"], "governance": {"write": "approve"}})
        bob = self.spawn("core", d=d, agent_id="ai:bob")
        with self.assertRaises(PendingApproval) as cm:
            bob.store("proposal", "queued, not written", namespace="team")
        self.assertEqual(cm.exception.pending["status"], "pending")
        self.assertTrue(cm.exception.pending["pending_id"])
        self.assertEqual(bob.search("queued", namespace="team")["count"], 0)

    def test_async_session_shape(self) -> None:
        """AsyncAiMemory and require_profile_async over an object shaped like
        mcp's ClientSession (awaitable call_tool returning CallToolResult-like
        objects); the real ClientSession is tested below when mcp is installed."""
        mem = self.spawn("core")

        class Session:
            async def call_tool(self, name: str, arguments: dict) -> object:
                r = mem.client.call_tool(name, arguments)
                content = [types.SimpleNamespace(type="text", text=c.get("text", "")) for c in r.get("content", [])]
                return types.SimpleNamespace(content=content, isError=r.get("isError", False))

        async def go() -> None:
            a = AsyncAiMemory(Session())
            with self.assertRaises(ProfileNotLoaded) as cm:
                await require_profile_async(a.session, "graph")
            self.assertIn("ai-memory mcp, or ai-memory serve over HTTP", cm.exception.hint)  # a session cannot say which
            with self.assertRaises(ProfileNotLoaded) as cm:
                await a.require_profile("graph", transport="http")
            self.assertEqual(cm.exception.hint, "restart ai-memory serve with --profile graph or set AI_MEMORY_PROFILE=graph where it runs")
            self.assertEqual((await a.require_profile("graph", expand=True))["expanded"], ["graph"])
            s = await a.store("async", "through the async wrapper")
            self.assertEqual((await a.get(s["id"]))["content"], "through the async wrapper")

        asyncio.run(go())
        with self.assertRaisesRegex(TypeError, "async"):
            require_profile(Session(), "core")


class OfficialClientSession(unittest.TestCase):
    def test_with_mcp_client_session(self) -> None:
        try:
            from mcp import ClientSession, StdioServerParameters
            from mcp.client.stdio import stdio_client
        except ImportError:
            self.skipTest("the mcp package is not installed (CI has no PyPI)")
        d = tempfile.mkdtemp(prefix="aim")
        self.addCleanup(shutil.rmtree, d, True)

        async def go() -> None:
            params = StdioServerParameters(command=str(BIN), args=spawn_args("core", str(Path(d, "d")), None),
                                           env={**os.environ, "HOME": d, "AI_MEMORY_ENGINE_IDLE_TIMEOUT": "2s"})
            async with stdio_client(params) as (r, w), ClientSession(r, w) as session:
                await session.initialize()
                with self.assertRaises(ProfileNotLoaded):
                    await require_profile_async(session, "graph")
                await require_profile_async(session, "graph", expand=True)

        asyncio.run(go())


class Resolve(unittest.TestCase):
    def test_uses_the_servers_table(self) -> None:
        table = {"core": ["core"], "graph": ["core", "graph"], "full": ["core", "graph", "acme"]}
        fams = ["core", "graph", "acme"]
        self.assertEqual(resolve_profile("full", table, fams), ["core", "graph", "acme"])
        self.assertEqual(resolve_profile("acme", table, fams), ["core", "acme"])
        self.assertEqual(resolve_profile("", table, fams), ["core"])
        with self.assertRaises(ValueError):
            resolve_profile("core,zzz", table, fams)

    def test_stdio_client_reports_a_dead_server(self) -> None:
        with self.assertRaises(ConnectionError):
            StdioClient("false")


if __name__ == "__main__":
    unittest.main()
