/** A tool answered with isError: its text is the server's message. */
export class ToolError extends Error {
  readonly tool: string;
  constructor(tool: string, message: string) {
    super(`${tool}: ${message}`);
    this.name = "ToolError";
    this.tool = tool;
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
  constructor(requested: string, missing: string[], denied: Record<string, string> = {}) {
    const hint = `restart the MCP server with --profile ${requested} or set AI_MEMORY_PROFILE=${requested}`;
    super(`profile ${requested} is not fully loaded: missing ${missing.join(", ")}; ${hint}`);
    this.name = "ProfileNotLoaded";
    this.requested = requested;
    this.missing = missing;
    this.hint = hint;
    this.denied = denied;
  }
}
