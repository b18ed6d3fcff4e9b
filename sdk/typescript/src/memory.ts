import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { callJSON, callText } from "./call.js";
import { PendingApproval, type Pending } from "./errors.js";
import { VERSION } from "./version.js";
import { requireProfile, type RequireProfileOptions, type RequireProfileResult } from "./profile.js";
import type {
  Capabilities, FamilySchemas, ListArgs, ListResult, MemoryWithLinks, RecallArgs, RecallResult,
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
    const client = new Client({ name: opts.clientName ?? "ai-memory-sdk", version: VERSION });
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

  /**
   * Stores a memory. Throws PendingApproval when the namespace's standard
   * queued the write for approval (nothing was written).
   */
  async store(args: StoreArgs): Promise<StoreResult> {
    const r = await callJSON<StoreResult | Pending>(this.client, "memory_store", { ...args, format: "json" });
    if ("pending_id" in r) throw new PendingApproval("memory_store", r);
    return r;
  }

  // The server leaves out an empty list of memories (fewer tokens for an
  // agent); these results always have one.
  async recall(args: RecallArgs): Promise<RecallResult> {
    const r = await callJSON<RecallResult>(this.client, "memory_recall", { ...args, format: "json" });
    return { ...r, memories: r.memories ?? [] };
  }

  async list(args: ListArgs = {}): Promise<ListResult> {
    const r = await callJSON<ListResult>(this.client, "memory_list", { ...args, format: "json" });
    return { ...r, memories: r.memories ?? [] };
  }

  get(id: string): Promise<MemoryWithLinks> {
    return callJSON<MemoryWithLinks>(this.client, "memory_get", { id, format: "json" });
  }

  async search(args: SearchArgs): Promise<SearchResult> {
    const r = await callJSON<SearchResult>(this.client, "memory_search", { ...args, format: "json" });
    return { ...r, results: r.results ?? [] };
  }

  /** Any tool by name, its text answer as is (for the TOON formats). */
  text(tool: string, args: Record<string, unknown> = {}): Promise<string> {
    return callText(this.client, tool, args);
  }
}
