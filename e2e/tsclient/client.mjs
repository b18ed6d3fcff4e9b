// Drives `ai-memory mcp` with the official MCP TypeScript SDK client, as a
// harness would, and prints what it saw as one JSON object on stdout.
// Usage: node client.mjs <path to ai-memory>   (environment passed through)
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const transport = new StdioClientTransport({ command: process.argv[2], args: ["mcp"], env: process.env, stderr: "ignore" });
const client = new Client({ name: "ts-sdk-e2e", version: "1.0.0" });
let listChanged = 0;
const waiters = [];
client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
  listChanged++;
  for (const wake of waiters.splice(0)) wake();
});
// nextListChanged resolves on the next tools/list_changed, or fails after a
// deadline so a missing notification is an error, not a hang.
const nextListChanged = () => {
  let timer;
  return Promise.race([
    new Promise((resolve) => waiters.push(resolve)),
    new Promise((_, reject) => { timer = setTimeout(() => reject(new Error("no tools/list_changed within 10 s")), 10000); }),
  ]).finally(() => clearTimeout(timer));
};
await client.connect(transport);

const text = (r) => r.content.map((c) => c.text).join("");
const out = { server: client.getServerVersion(), capabilities: client.getServerCapabilities() };
out.tools = (await client.listTools()).tools.map((t) => t.name).sort();
const stored = await client.callTool({ name: "memory_store", arguments: { title: "TS SDK", content: "stored through the official TypeScript client" } });
out.store = JSON.parse(text(stored));
const recalled = await client.callTool({ name: "memory_recall", arguments: { context: "typescript client", format: "json" } });
out.recall = JSON.parse(text(recalled));
const bad = await client.callTool({ name: "memory_store", arguments: { title: "x" } });
out.badStore = { isError: bad.isError, text: text(bad) };
const changed = nextListChanged();
const expanded = await client.callTool({ name: "memory_capabilities", arguments: { family: "other", include_schema: true } });
out.expanded = JSON.parse(text(expanded));
await changed;
out.listChanged = listChanged;
out.toolsAfter = (await client.listTools()).tools.map((t) => t.name).sort();
const echoed = await client.callTool({ name: "test_echo", arguments: { say: "hi" } });
out.echo = JSON.parse(text(echoed));
try {
  await client.callTool({ name: "memory_nope", arguments: {} });
  out.unknown = "no error";
} catch (e) {
  out.unknown = { code: e.code, message: e.message };
}
console.log(JSON.stringify(out));
await client.close();
