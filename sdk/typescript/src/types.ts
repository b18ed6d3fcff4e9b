// Shapes of the core tools' arguments and JSON results (format "json").

export type Tier = "short" | "mid" | "long";
export type Scope = "private" | "team" | "unit" | "org" | "collective";

export interface Memory {
  id: string;
  title: string;
  /** in recall, list and search a long content is cut, saying so; memory_get has it whole */
  content: string;
  tier: Tier;
  namespace: string;
  priority: number;
  confidence: number;
  tags?: string[];
  source: string;
  /** who stored it, as the server's host resolved the caller; absent on memories older than the field */
  created_by?: string;
  updated_by?: string;
  created_at: string;
  updated_at: string;
  /** absent for tier long (no expiry) */
  expires_at?: string;
  last_accessed_at?: string;
  access_count?: number;
  metadata?: Record<string, unknown>;
  /** recall only: the memory's rank score */
  score?: number;
  [key: string]: unknown;
}

/** One link of memory_get, in either direction. */
export interface Link {
  source_id: string;
  target_id: string;
  relation: string;
  created_at?: string;
}

/** memory_get's answer: the memory with its content whole, and its links. */
export interface MemoryWithLinks extends Memory {
  links?: Link[];
}

export interface StoreArgs {
  title: string;
  content: string;
  tier?: Tier;
  namespace?: string;
  tags?: string[];
  priority?: number;
  confidence?: number;
  source?: string;
  metadata?: Record<string, unknown>;
  agent_id?: string;
  scope?: Scope;
  on_conflict?: "merge" | "version" | "error";
  [key: string]: unknown;
}

export interface StoreResult {
  id: string;
  tier: Tier;
  title: string;
  namespace: string;
  agent_id?: string;
  /** true when the title existed and the memory was merged into it */
  duplicate?: boolean;
  action?: string;
  /** ids of memories the new one may contradict */
  potential_contradictions?: string[];
}

export interface RecallArgs {
  context: string;
  namespace?: string;
  limit?: number;
  tags?: string;
  since?: string;
  until?: string;
  as_agent?: string;
  budget_tokens?: number;
}

/** One namespace standard recall puts beside the memories. */
export interface StandardRow {
  namespace: string;
  id: string;
  title: string;
  content: string;
}

export interface RecallResult {
  count: number;
  /** "keyword" or "hybrid" */
  mode: string;
  tokens_used: number;
  /** best first; empty when nothing matched (the SDK fills in the [] the server leaves out) */
  memories: Memory[];
  /** why recall was keyword-only although an embedding model is configured */
  semantic_reason?: string;
  budget_tokens?: number;
  budget_overflow?: boolean;
  memories_dropped?: number;
  /** the namespace standard of the recalled namespace, or several along its chain */
  standard?: StandardRow;
  standards?: StandardRow[];
}

export interface ListArgs {
  namespace?: string;
  tier?: Tier;
  limit?: number;
  agent_id?: string;
}

export interface ListResult {
  count: number;
  /** newest first; [] when none */
  memories: Memory[];
}

export interface SearchArgs extends ListArgs {
  query: string;
  as_agent?: string;
}

export interface SearchResult {
  count: number;
  /** [] when none */
  results: Memory[];
}

/** One row of the capabilities overview's family table. */
export interface FamilyRow {
  name: string;
  tool_count: number;
  loaded: boolean;
  /** present, and false, only for a family no installed plugin provides */
  installed?: boolean;
  tools: string[];
}

/** memory_capabilities with no arguments: the live server's overview. */
export interface Capabilities {
  schema_version: string;
  version: string;
  tier: string;
  features: Record<string, unknown>;
  /** the embedding endpoint's state, when one is configured */
  embedder?: Record<string, unknown>;
  /** the profile this server was started with */
  profile: string;
  /** each named profile's families, as this server resolves them */
  profiles: Record<string, string[]>;
  families: {
    schema_version: string;
    always_on: string[];
    families: FamilyRow[];
  };
}

/** memory_capabilities {family, include_schema: true}: the family loaded. */
export interface FamilySchemas {
  schema_version: string;
  family: string;
  loaded: boolean;
  tools: { name: string; description?: string; inputSchema: Record<string, unknown>; annotations?: Record<string, unknown> }[];
}
