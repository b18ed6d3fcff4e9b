/** A tool answered with isError: its text is the server's message. */
export class ToolError extends Error {
  readonly tool: string;
  constructor(tool: string, message: string) {
    super(`${tool}: ${message}`);
    this.name = "ToolError";
    this.tool = tool;
  }
}

/** How the client reaches the server, when the SDK can tell. */
export type TransportKind = "stdio" | "http";

/** What to do about a missing profile, for the way the server was started. */
export function profileHint(requested: string, transport?: TransportKind): string {
  switch (transport) {
    case "stdio":
      return `restart the MCP server with --profile ${requested} or set AI_MEMORY_PROFILE=${requested}`;
    case "http":
      return `restart ai-memory serve with --profile ${requested} or set AI_MEMORY_PROFILE=${requested} where it runs`;
    default:
      return `start the server with --profile ${requested} (ai-memory mcp, or ai-memory serve over HTTP) or set AI_MEMORY_PROFILE=${requested}`;
  }
}

/**
 * The live server does not serve every family a profile needs. `hint` says
 * exactly how to start it so that it does.
 */
export class ProfileNotLoaded extends Error {
  readonly requested: string;
  readonly missing: string[];
  readonly hint: string;
  /** why an expansion was refused, by family (only with expand) */
  readonly denied: Record<string, string>;
  constructor(requested: string, missing: string[], denied: Record<string, string> = {}, transport?: TransportKind) {
    const hint = profileHint(requested, transport);
    super(`profile ${requested} is not fully loaded: missing ${missing.join(", ")}; ${hint}`);
    this.name = "ProfileNotLoaded";
    this.requested = requested;
    this.missing = missing;
    this.hint = hint;
    this.denied = denied;
  }
}

/** A namespace's policy queued a write for approval: nothing was written yet. */
export interface Pending {
  status: "pending";
  pending_id: string;
  action: string;
  namespace?: string;
  approver?: string;
  reason: string;
}

/**
 * The write was queued for approval by the namespace's standard (nothing
 * was written); `pending` is the server's answer, whose `pending_id`
 * memory_pending_approve takes.
 */
export class PendingApproval extends Error {
  readonly tool: string;
  readonly pending: Pending;
  constructor(tool: string, pending: Pending) {
    super(`${tool}: queued for approval as ${pending.pending_id}: ${pending.reason}`);
    this.name = "PendingApproval";
    this.tool = tool;
    this.pending = pending;
  }
}
