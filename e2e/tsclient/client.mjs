// Drives `ai-memory mcp` with the official MCP TypeScript SDK client, as a
// harness would, and prints what it saw as one JSON object on stdout.
// Usage: node client.mjs <path to ai-memory>   (environment passed through)
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const transport = new StdioClientTransport({ command: process.argv[2], args: ["mcp"], env: process.env, stderr: "ignore" });
const client = new Client({ name: "ts-sdk-e2e", version: "1.0.0" });
let listChanged = 0;
let sawListChanged;
const listChangedSeen = new Promise((resolve) => { sawListChanged = resolve; });
client.setNotificationHandler(ToolListChangedNotificationSchema, () => { listChanged++; sawListChanged(); });
await client.connect(transport);

const text = (r) => r.content.map((c) => c.text).join("");
const out = { server: client.getServerVersion(), capabilities: client.getServerCapabilities() };
out.tools = (await client.listTools()).tools.map((t) => t.name).sort();
const stored = await client.callTool({ name: "memory_store", arguments: { title: "TS SDK", content: "stored through the official TypeScript client", format: "json" } });
out.store = JSON.parse(text(stored));
const recalled = await client.callTool({ name: "memory_recall", arguments: { context: "typescript client", format: "json" } });
out.recall = JSON.parse(text(recalled));
const bad = await client.callTool({ name: "memory_store", arguments: { title: "x" } });
out.badStore = { isError: bad.isError, text: text(bad) };
const expanded = await client.callTool({ name: "memory_capabilities", arguments: { family: "echo", include_schema: true } });
out.expanded = JSON.parse(text(expanded));
// Wait for the notification itself (the timeout only bounds a failure).
let timer;
await Promise.race([listChangedSeen, new Promise((_, fail) => { timer = setTimeout(() => fail(new Error("no tools/list_changed within 10 s")), 10000); })]);
clearTimeout(timer);
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
