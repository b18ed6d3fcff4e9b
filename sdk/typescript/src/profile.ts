import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ProfileNotLoaded, ToolError, type TransportKind } from "./errors.js";
import type { Capabilities, FamilySchemas } from "./types.js";
import { callJSON, type ToolCaller } from "./call.js";

/** Families every profile includes. */
export const BASE_FAMILY = "core";

/**
 * The families a profile string asks for, resolved with the server's own
 * profile table and family list (so a third-party family counts): a named
 * profile, or a comma list of profile and family names; core is always in.
 * An unknown or uppercase name throws a plain Error naming the valid ones.
 */
export function resolveProfile(profile: string, table: Record<string, string[]>, families: string[]): string[] {
  const s = profile.trim();
  if (s.toLowerCase() !== s) {
    throw new Error(`profile ${JSON.stringify(s)}: names are lowercase (for example ${JSON.stringify(s.toLowerCase())})`);
  }
  const out = new Set<string>([BASE_FAMILY]);
  for (const raw of s.split(",")) {
    const tok = raw.trim();
    if (tok === "") continue;
    const named = table[tok];
    if (named) {
      named.forEach((f) => out.add(f));
    } else if (families.includes(tok)) {
      out.add(tok);
    } else {
      throw new Error(
        `unknown profile or family ${JSON.stringify(tok)}: profiles are ${Object.keys(table).join(", ")}; families are ${families.join(", ")}`,
      );
    }
  }
  // The server's canonical order, then anything else by name.
  const ordered = families.filter((f) => out.has(f));
  return ordered.concat([...out].filter((f) => !families.includes(f)).sort());
}

export interface RequireProfileOptions {
  /**
   * Load missing families now through memory_capabilities
   * {family, include_schema: true}, where the server's allowlist permits.
   */
  expand?: boolean;
}

export interface RequireProfileResult {
  requested: string;
  families: string[];
  /** families this call loaded (expand) */
  expanded: string[];
}

/**
 * Checks that the live MCP server `client` is connected to serves every
 * family of `profile`, reading the server's own capabilities overview (not
 * any side channel). Throws ProfileNotLoaded otherwise; with expand, loads
 * what it may first.
 */
export async function requireProfile(
  client: Client | ToolCaller,
  profile: string,
  opts: RequireProfileOptions = {},
): Promise<RequireProfileResult> {
  const caps = await callJSON<Capabilities>(client, "memory_capabilities", {});
  if (!caps.families) {
    throw new Error(
      `the server's capabilities overview (schema_version ${caps.schema_version}) has no families block; requireProfile needs ai-memory 0.1 or later`,
    );
  }
  const rows = caps.families.families;
  const names = rows.map((r) => r.name);
  const table = caps.profiles ?? { core: ["core"], full: names };
  const families = resolveProfile(profile, table, names);
  const loaded = new Set(rows.filter((r) => r.loaded).map((r) => r.name));
  let missing = families.filter((f) => !loaded.has(f));
  const expanded: string[] = [];
  const denied: Record<string, string> = {};
  if (missing.length > 0 && opts.expand) {
    for (const f of missing) {
      const row = rows.find((r) => r.name === f);
      if (row?.installed === false) {
        denied[f] = "no installed plugin provides it";
        continue;
      }
      try {
        const got = await callJSON<FamilySchemas>(client, "memory_capabilities", { family: f, include_schema: true });
        if (got.loaded) {
          expanded.push(f);
          loaded.add(f);
        }
      } catch (e) {
        if (!(e instanceof ToolError)) throw e;
        denied[f] = e.message;
      }
    }
    missing = families.filter((f) => !loaded.has(f));
  }
  if (missing.length > 0) {
    throw new ProfileNotLoaded(profile.trim(), missing, denied, transportOf(client));
  }
  return { requested: profile.trim(), families, expanded };
}

/** stdio or HTTP, for a Client connected by one of the MCP SDK's transports. */
function transportOf(client: Client | ToolCaller): TransportKind | undefined {
  const t = (client as { transport?: unknown }).transport;
  if (t instanceof StdioClientTransport) return "stdio";
  if (t instanceof StreamableHTTPClientTransport || t instanceof SSEClientTransport) return "http";
  return undefined;
}
