// Shapes of the core tools' arguments and JSON results (format "json").

export type Tier = "short" | "mid" | "long";
export type Scope = "private" | "team" | "unit" | "org" | "collective";

export interface Memory {
  id: string;
  title: string;
  content: string;
  tier: Tier;
  namespace: string;
  priority: number;
  confidence: number;
  tags?: string[];
  source: string;
  created_by: string;
  updated_by: string;
  created_at: string;
  updated_at: string;
  expires_at?: string;
  last_accessed_at?: string;
  access_count?: number;
  metadata?: Record<string, unknown>;
  /** recall only: the memory's rank score */
  score?: number;
  [key: string]: unknown;
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
  agent_id: string;
  [key: string]: unknown;
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

export interface RecallResult {
  count: number;
  mode: string;
  tokens_used: number;
  memories?: Memory[];
}

export interface ListArgs {
  namespace?: string;
  tier?: Tier;
  limit?: number;
  agent_id?: string;
}

export interface ListResult {
  count: number;
  memories?: Memory[];
}

export interface SearchArgs extends ListArgs {
  query: string;
  as_agent?: string;
}

export interface SearchResult {
  count: number;
  results?: Memory[];
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
  /** the profile this server was started with */
  profile?: string;
  /** each named profile's families, as this server resolves them */
  profiles?: Record<string, string[]>;
  families?: {
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
  tools: { name: string; description?: string; inputSchema: unknown }[];
}
