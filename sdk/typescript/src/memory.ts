import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { callJSON, callText } from "./call.js";
import { requireProfile, type RequireProfileOptions, type RequireProfileResult } from "./profile.js";
import type {
  Capabilities, FamilySchemas, ListArgs, ListResult, Memory, RecallArgs, RecallResult,
  SearchArgs, SearchResult, StoreArgs, StoreResult,
} from "./types.js";

export interface SpawnOptions {
  /** the ai-memory binary (default "ai-memory" on PATH) */
  binary?: string;
  /** the profile to start with, e.g. "core", "graph" or "core,archive" */
  profile?: string;
  /** the data dir (default: ai-memory's own) */
  dataDir?: string;
  /** the session identity (--agent-id) */
  agentId?: string;
  /** extra environment, on top of the MCP SDK's safe default environment */
  env?: Record<string, string>;
  /** the server's stderr: "ignore" (default), "inherit" or "pipe" */
  stderr?: "ignore" | "inherit" | "pipe";
  /** the client name the server sees (its default identity is ai:<name>) */
  clientName?: string;
  /** the server's working directory: inside a git work tree, memories default to the project's namespace */
  cwd?: string;
}

/** Typed calls of ai-memory's core tools over any MCP client. */
export class AiMemory {
  readonly client: Client;

  constructor(client: Client) {
    this.client = client;
  }

  /** Starts `ai-memory mcp --profile P` and connects an MCP client to it. */
  static async spawn(opts: SpawnOptions = {}): Promise<AiMemory> {
    const args = ["mcp"];
    if (opts.profile) args.push("--profile", opts.profile);
    if (opts.dataDir) args.push("--data-dir", opts.dataDir);
    if (opts.agentId) args.push("--agent-id", opts.agentId);
    const transport = new StdioClientTransport({
      command: opts.binary ?? "ai-memory",
      args,
      env: { ...getDefaultEnvironment(), ...(opts.env ?? {}) },
      stderr: opts.stderr ?? "ignore",
      cwd: opts.cwd,
    });
    const client = new Client({ name: opts.clientName ?? "ai-memory-sdk", version: "0.1.0" });
    await client.connect(transport);
    return new AiMemory(client);
  }

  close(): Promise<void> {
    return this.client.close();
  }

  /** The live server's capabilities overview. */
  capabilities(): Promise<Capabilities> {
    return callJSON<Capabilities>(this.client, "memory_capabilities", {});
  }

  /** Loads a family into this session (where the allowlist permits). */
  loadFamily(family: string): Promise<FamilySchemas> {
    return callJSON<FamilySchemas>(this.client, "memory_capabilities", { family, include_schema: true });
  }

  /** Runs any tool through memory_capabilities, loading its family if needed. */
  run<T = unknown>(tool: string, args: Record<string, unknown> = {}): Promise<T> {
    return callJSON<T>(this.client, "memory_capabilities", { tool, arguments: args });
  }

  requireProfile(profile: string, opts?: RequireProfileOptions): Promise<RequireProfileResult> {
    return requireProfile(this.client, profile, opts);
  }

  store(args: StoreArgs): Promise<StoreResult> {
    return callJSON<StoreResult>(this.client, "memory_store", { ...args, format: "json" });
  }

  recall(args: RecallArgs): Promise<RecallResult> {
    return callJSON<RecallResult>(this.client, "memory_recall", { ...args, format: "json" });
  }

  list(args: ListArgs = {}): Promise<ListResult> {
    return callJSON<ListResult>(this.client, "memory_list", { ...args, format: "json" });
  }

  get(id: string): Promise<Memory> {
    return callJSON<Memory>(this.client, "memory_get", { id, format: "json" });
  }

  search(args: SearchArgs): Promise<SearchResult> {
    return callJSON<SearchResult>(this.client, "memory_search", { ...args, format: "json" });
  }

  /** Any tool by name, its text answer as is (for the TOON formats). */
  text(tool: string, args: Record<string, unknown> = {}): Promise<string> {
    return callText(this.client, tool, args);
  }
}
