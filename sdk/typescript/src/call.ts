import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ToolError } from "./errors.js";

/** Anything that can call an MCP tool the way Client does. */
export interface ToolCaller {
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<unknown>;
}

interface ToolResult {
  isError?: boolean;
  content?: { type: string; text?: string }[];
}

/** The text of a tool result; a result with isError throws ToolError. */
export async function callText(client: Client | ToolCaller, name: string, args: Record<string, unknown>): Promise<string> {
  const r = (await client.callTool({ name, arguments: args })) as ToolResult;
  const text = (r.content ?? []).map((c) => c.text ?? "").join("");
  if (r.isError) throw new ToolError(name, text);
  return text;
}

/** A tool call whose text result is JSON. */
export async function callJSON<T>(client: Client | ToolCaller, name: string, args: Record<string, unknown>): Promise<T> {
  const text = await callText(client, name, args);
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new ToolError(name, `answer is not JSON: ${text.slice(0, 64)} (${text.length} bytes)`);
  }
}
