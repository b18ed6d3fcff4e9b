// Against the real binary: AI_MEMORY_TEST_BIN (make test sets it), else ../../bin.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { AiMemory, requireProfile, resolveProfile, PendingApproval, ProfileNotLoaded, ToolError } from "../dist/index.js";

const here = dirname(fileURLToPath(import.meta.url));
const bin = join(process.env.AI_MEMORY_TEST_BIN ?? resolve(here, "../../../bin"), "ai-memory");
const dirs = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function newDir(config = "") {
  const dir = mkdtempSync(join(tmpdir(), "aim"));
  dirs.push(dir);
  writeFileSync(join(dir, "config.toml"), config);
  return dir;
}

async function spawn(profile, config = "", dir = newDir(config), agentId = undefined) {
  const mem = await AiMemory.spawn({
    binary: bin, profile, dataDir: join(dir, "d"), clientName: "ts-sdk-test", cwd: dir, agentId,
    env: { HOME: dir, AI_MEMORY_CONFIG: join(dir, "config.toml"), AI_MEMORY_ENGINE_IDLE_TIMEOUT: "2s" },
  });
  return mem;
}

test("requireProfile passes under the profile the server runs", async () => {
  const mem = await spawn("graph");
  try {
    const r = await requireProfile(mem.client, "graph");
    assert.deepEqual(r, { requested: "graph", families: ["core", "graph"], expanded: [] });
    await mem.requireProfile("core");
  } finally {
    await mem.close();
  }
});

test("requireProfile under core throws ProfileNotLoaded with the exact fields", async () => {
  const mem = await spawn("core");
  try {
    await assert.rejects(requireProfile(mem.client, "graph"), (e) => {
      assert.ok(e instanceof ProfileNotLoaded);
      assert.equal(e.name, "ProfileNotLoaded");
      assert.equal(e.requested, "graph");
      assert.deepEqual(e.missing, ["graph"]);
      assert.equal(e.hint, "restart the MCP server with --profile graph or set AI_MEMORY_PROFILE=graph");
      return true;
    });
    // A profile of several families names every one that is missing.
    await assert.rejects(requireProfile(mem.client, "admin"), (e) => {
      assert.deepEqual(e.missing, ["lifecycle", "governance"]);
      assert.equal(e.hint, "restart the MCP server with --profile admin or set AI_MEMORY_PROFILE=admin");
      return true;
    });
    await assert.rejects(requireProfile(mem.client, "Graph"), (e) => !(e instanceof ProfileNotLoaded) && /lowercase/.test(e.message));
    await assert.rejects(requireProfile(mem.client, "nope"), /unknown profile or family "nope"/);
  } finally {
    await mem.close();
  }
});

test("requireProfile expands when asked and allowed", async () => {
  const mem = await spawn("core");
  try {
    const r = await requireProfile(mem.client, "graph", { expand: true });
    assert.deepEqual(r.expanded, ["graph"]);
    const tools = (await mem.client.listTools()).tools.map((t) => t.name);
    assert.ok(tools.includes("memory_link"), tools.join(","));
    await requireProfile(mem.client, "graph"); // loaded now
  } finally {
    await mem.close();
  }
});

test("requireProfile does not expand where the allowlist forbids it", async () => {
  const mem = await spawn("core", '[mcp.allowlist]\n"*" = ["core"]\n');
  try {
    await assert.rejects(requireProfile(mem.client, "graph", { expand: true }), (e) => {
      assert.ok(e instanceof ProfileNotLoaded);
      assert.deepEqual(e.missing, ["graph"]);
      assert.ok(e.denied.graph, JSON.stringify(e.denied));
      return true;
    });
  } finally {
    await mem.close();
  }
});

test("resolveProfile uses the server's table", () => {
  const table = { core: ["core"], graph: ["core", "graph"], full: ["core", "graph", "acme"] };
  const fams = ["core", "graph", "acme"];
  assert.deepEqual(resolveProfile("full", table, fams), ["core", "graph", "acme"]);
  assert.deepEqual(resolveProfile("acme", table, fams), ["core", "acme"]);
  assert.deepEqual(resolveProfile("", table, fams), ["core"]);
  assert.throws(() => resolveProfile("core,zzz", table, fams), /unknown profile or family "zzz"/);
});

test("typed core wrappers", async () => {
  const mem = await spawn("core");
  try {
    const caps = await mem.capabilities();
    assert.equal(caps.profile, "core");
    assert.deepEqual(caps.profiles.graph, ["core", "graph"]);
    const s = await mem.store({ title: "SDK wrapper", content: "stored through the typed wrapper", tags: ["sdk"] });
    assert.equal(s.agent_id, "ai:ts-sdk-test");
    const got = await mem.get(s.id);
    assert.equal(got.content, "stored through the typed wrapper");
    assert.deepEqual(got.tags, ["sdk"]);
    const rec = await mem.recall({ context: "typed wrapper" });
    assert.equal(rec.memories[0].id, s.id);
    const list = await mem.list({ namespace: "global" });
    assert.equal(list.count, 1);
    const found = await mem.search({ query: "wrapper" });
    assert.equal(found.results[0].id, s.id);
    await assert.rejects(mem.store({ title: "no content" }), (e) => e instanceof ToolError && /content/.test(e.message));
    const links = await mem.run("memory_get_links", { id: s.id }); // graph, loaded on first use
    assert.ok(links);
  } finally {
    await mem.close();
  }
});

test("empty results are empty lists, as typed", async () => {
  const mem = await spawn("core");
  try {
    const rec = await mem.recall({ context: "nothing stored yet" });
    assert.deepEqual([rec.count, rec.memories], [0, []]);
    assert.deepEqual((await mem.list()).memories, []);
    assert.deepEqual((await mem.search({ query: "nothing" })).results, []);
  } finally {
    await mem.close();
  }
});

test("a store the namespace's standard queues throws PendingApproval", async () => {
  const dir = newDir();
  const alice = await spawn("admin", "", dir, "ai:alice");
  let bob;
  try {
    const rules = await alice.store({ title: "team rules", content: "writes need approval", namespace: "team" });
    await alice.run("memory_namespace_set_standard", { namespace: "team", id: rules.id, governance: { write: "approve" } });
    bob = await spawn("core", "", dir, "ai:bob");
    await assert.rejects(bob.store({ title: "proposal", content: "queued, not written", namespace: "team" }), (e) => {
      assert.ok(e instanceof PendingApproval, String(e));
      assert.equal(e.pending.status, "pending");
      assert.ok(e.pending.pending_id, JSON.stringify(e.pending));
      return true;
    });
    assert.equal((await bob.search({ query: "queued", namespace: "team" })).count, 0);
  } finally {
    await bob?.close();
    await alice.close();
  }
});
