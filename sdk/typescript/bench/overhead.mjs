// SDK call overhead over the raw MCP client: N memory_get calls each way on
// one server. Usage: npm run build && node bench/overhead.mjs [N] (AI_MEMORY_TEST_BIN as in the tests).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { AiMemory } from "../dist/index.js";

const n = Number(process.argv[2] ?? 2000);
const here = dirname(fileURLToPath(import.meta.url));
const bin = join(process.env.AI_MEMORY_TEST_BIN ?? resolve(here, "../../../bin"), "ai-memory");
const dir = mkdtempSync(join(tmpdir(), "aim"));
const mem = await AiMemory.spawn({ binary: bin, dataDir: join(dir, "d"), env: { HOME: dir, AI_MEMORY_ENGINE_IDLE_TIMEOUT: "2s" } });
const { id } = await mem.store({ title: "bench", content: "overhead of the typed wrapper" });

async function time(label, fn) {
  for (let i = 0; i < 200; i++) await fn(); // warm up
  const ts = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    await fn();
    ts.push(Number(process.hrtime.bigint() - t0) / 1e3);
  }
  ts.sort((a, b) => a - b);
  const p = (q) => ts[Math.floor(q * (ts.length - 1))].toFixed(0);
  console.log(`${label}: p50 ${p(0.5)} us, p95 ${p(0.95)} us, mean ${(ts.reduce((a, b) => a + b, 0) / ts.length).toFixed(0)} us`);
}
// Alternate the two so drift hits both.
for (let round = 0; round < 2; round++) {
  await time("raw client.callTool + JSON.parse", async () => {
    const r = await mem.client.callTool({ name: "memory_get", arguments: { id } });
    JSON.parse(r.content[0].text);
  });
  await time("sdk mem.get", () => mem.get(id));
}
await mem.close();
rmSync(dir, { recursive: true, force: true });
